#include <catch2/catch.hpp>

#include "trn3/core/component.h"
#include "trn3/core/log.h"

using namespace trn3;

namespace {
struct block : component {
    trace_point in_trace{*this, "in"};
    trace_point out_trace{*this, "out"};
    explicit block(const sc_core::sc_module_name& n) : component(n, frequency{1.2e9}) {}
};
}  // namespace

TEST_CASE("a component's clock param gives its period and cycle times") {
    block b("vector");
    CHECK(b.clock.name() == "vector.clock");
    CHECK(b.cycles(12) == sc_core::sc_time(10, sc_core::SC_NS));
}

TEST_CASE("a component's log level is a param") {
    param_registry::instance().set_pending_text("vector.log_level", "debug", "test");
    block b("vector");
    CHECK(b.log().level() == spdlog::level::debug);
    block c("scalar");
    CHECK(c.log().level() == spdlog::level::warn);  // the global default
}

TEST_CASE("an unknown log level is a user error") {
    param_registry::instance().set_pending_text("vector.log_level", "chatty", "test");
    CHECK_THROWS_WITH(block("vector"),
                      Catch::Contains("vector.log_level = 'chatty' (test): must be one of \"\", trace, debug"));
}

TEST_CASE("the trace switch works per socket and per module") {
    param_registry::instance().set_pending_text("a.out.trace", "true", "test");
    param_registry::instance().set_pending_text("b.trace", "true", "test");
    block a("a"), b("b");
    CHECK(!a.in_trace.enabled());
    CHECK(a.out_trace.enabled());
    CHECK(b.in_trace.enabled());
    CHECK(b.out_trace.enabled());
}

TEST_CASE("a trace line names socket, command, address, bytes and response") {
    unsigned char data[4] = {0x90, 0, 0, 0};
    tlm::tlm_generic_payload tx;
    tx.set_read();
    tx.set_address(0x18);
    tx.set_data_ptr(data);
    tx.set_data_length(4);
    tx.set_response_status(tlm::TLM_OK_RESPONSE);
    CHECK(describe(tx, "in") == "in >> RD 0x18 [90 00 00 00] (TLM_OK_RESPONSE)");
}
