#include "trn3/core/traffic_generator.h"

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "trn3/core/payload.h"

namespace trn3 {

traffic_generator::traffic_generator(const sc_core::sc_module_name& name, const defaults& d)
    : component(name, frequency{1e9}), out("out"),
      base(this, "base", d.base, "first address of the window", address_range()),
      window(this, "window", d.window, "size of the window the traffic covers", range<byte_count>{byte_count{1}, {}}),
      count(this, "count", d.count, "blocks to write and read back"),
      block(this, "block", d.block, "bytes per transaction", range<byte_count>{byte_count{1}, byte_count{1 << 20}}),
      pattern(this, "pattern", d.pattern, "address order", one_of<std::string>{{"sequential", "random"}}),
      seed(this, "seed", 1, "seed of the random address order", seed_range()),
      use_dmi(this, "use_dmi", d.use_dmi, "use DMI when the target grants it"),
      dmi_timing(this, "dmi_timing", d.dmi_timing,
                 "charge each DMI access through a timing_only transaction (for targets whose timing depends on "
                 "traffic, such as HBM); false: the grant's fixed latency"),
      rng_(seed.get()), trace_out_(*this, "out"), track_(timeline::instance().track_of(*this)),
      writes_(this, "writes", "write transactions issued"), reads_(this, "reads", "read transactions issued"),
      dmi_accesses_(this, "dmi_accesses", "accesses made through a DMI pointer"),
      mismatches_(this, "mismatches", "read-back blocks that differed from what was written"),
      errors_(this, "errors", "accesses that got an error response") {
    if (block.get().bytes > window.get().bytes)
        throw config_error("param " + block.name() + " is larger than " + window.name());
    random_ = pattern.get() == "random";
    timing_tx_.set_extension(new timing_only);  // the payload owns it
    out.register_invalidate_direct_mem_ptr(this, &traffic_generator::invalidate_direct_mem_ptr);
    SC_HAS_PROCESS(traffic_generator);
    SC_THREAD(run);
}

std::uint64_t traffic_generator::address_of(std::uint64_t i) {
    const std::uint64_t blocks = window.get().bytes / block.get().bytes;
    const std::uint64_t index = random_ ? rng_() % blocks : i % blocks;
    return base.get() + index * block.get().bytes;
}

bool traffic_generator::access(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, unsigned len) {
    const bool is_write = cmd == tlm::TLM_WRITE_COMMAND;
    (is_write ? writes_ : reads_) += 1;
    if (use_dmi.get()) {
        if (unsigned char* p = dmi_.lookup(addr, len, is_write)) {
            if (is_write) std::memcpy(p, data, len);
            else std::memcpy(data, p, len);
            ++dmi_accesses_;
            if (dmi_timing.get()) {
                charge_timing(cmd, addr, len);
            } else {
                const tlm::tlm_dmi& g = dmi_.last_grant();
                qk_.inc(is_write ? g.get_write_latency() : g.get_read_latency());
                ++transaction_count();
            }
            if (qk_.need_sync()) qk_.sync();
            return true;
        }
    }
    tlm::tlm_generic_payload tx;
    set_access(tx, cmd, addr, data, len);
    sc_core::sc_time delay = qk_.get_local_time();
    out->b_transport(tx, delay);
    qk_.set(delay);
    trace_out_.record(tx, delay);
    if (tx.is_response_error()) {
        ++errors_;
        log().warn("{} at 0x{:x} failed: {}", is_write ? "write" : "read", addr, tx.get_response_string());
        timeline::instance().instant(track_, tx.get_response_string(), qk_.get_current_time());
        return false;
    }
    if (use_dmi.get() && tx.is_dmi_allowed()) {
        tlm::tlm_dmi grant;
        tx.set_address(addr);
        if (out->get_direct_mem_ptr(tx, grant)) dmi_.insert(grant);
    }
    if (qk_.need_sync()) qk_.sync();
    return true;
}

// A legal TLM transaction whose target charges the time and moves no data:
// its data pointer is a scratch buffer the target leaves alone (the protocol
// checker watches that), and its timing_only extension belongs to the payload,
// which is reused for every charge.
void traffic_generator::charge_timing(tlm::tlm_command cmd, std::uint64_t addr, unsigned len) {
    if (timing_scratch_.size() < len) timing_scratch_.resize(len);
    set_access(timing_tx_, cmd, addr, timing_scratch_.data(), len);
    sc_core::sc_time delay = qk_.get_local_time();
    out->b_transport(timing_tx_, delay);
    qk_.set(delay);
}

void traffic_generator::run() {
    qk_.reset();
    const sc_core::sc_time started = sc_core::sc_time_stamp();
    const auto len = static_cast<unsigned>(block.get().bytes);
    std::vector<unsigned char> wdata(len), rdata(len);
    for (std::uint64_t i = 0; i < count.get(); ++i) {
        const std::uint64_t addr = address_of(i);
        // The data names the address and the pass, so stale data is caught.
        for (unsigned b = 0; b < len; ++b) wdata[b] = static_cast<unsigned char>((addr + b) * 131 + i * 7);
        if (!access(tlm::TLM_WRITE_COMMAND, addr, wdata.data(), len)) continue;
        if (!access(tlm::TLM_READ_COMMAND, addr, rdata.data(), len)) continue;
        if (std::memcmp(wdata.data(), rdata.data(), len) != 0) {
            ++mismatches_;
            log().error("read-back mismatch at 0x{:x}", addr);
            timeline::instance().instant(track_, "mismatch", qk_.get_current_time());
        }
    }
    qk_.sync();
    timeline::instance().slice(track_, fmt::format("{} x {} {}", count.get(), format_byte_count(block), pattern.get()),
                               started, sc_core::sc_time_stamp());
    finished_ = true;
    log().info("done: {} writes, {} reads, {} through DMI, {} mismatches, {} errors", writes_.value(), reads_.value(),
               dmi_accesses_.value(), mismatches_.value(), errors_.value());
    done_.notify();
}

}  // namespace trn3
