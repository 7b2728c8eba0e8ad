// sc_spawn for the engines.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "trn3/dma/dma_engine.h"

#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "trn3/core/log.h"
#include "trn3/core/payload.h"
#include "trn3/dma/fabric_write.h"

namespace trn3::dma {

using sc_core::sc_time;

dma_engine::dma_engine(const sc_core::sc_module_name& name, unsigned default_engines)
    : reg_block(name, frequency{1.4e9}),
      queues(this, "queues", TRN3_DMA_QUEUES,
             "descriptor rings (queue q counts its fabric writes on channel q; the public figure is 16 engines of 16 "
             "queues per NeuronCore)",
             range<std::uint64_t>{2, TRN3_DMA_QUEUES_MAX}),
      chunk(this, "chunk", byte_count{1 << 20}, "largest piece moved at once (read, then written)",
            range<byte_count>{byte_count{4096}, byte_count{1ull << 30}}),
      descriptor_cost(this, "descriptor_cost", sc_time(20, sc_core::SC_NS), "engine time per descriptor"),
      reads_ahead(this, "reads_ahead", 4,
                  "pieces (chunk) read ahead of the one being written: the engine's reads outstanding (each "
                  "engine keeps reads_ahead buffers of up to chunk bytes of host memory once it has moved data)",
                  range<std::uint64_t>{1, 64}),
      descriptor_prefetch(this, "descriptor_prefetch", 8,
                          "descriptors read at once from a queue's ring (those between HEAD and TAIL)",
                          range<std::uint64_t>{1, 256}),
      engines(this, "engines", default_engines,
              "engines serving the queues at once (each one descriptor of a different queue at a time)",
              range<std::uint64_t>{1, TRN3_DMA_QUEUES_MAX}),
      descriptors_(this, "descriptors", "descriptors completed"), bytes_(this, "bytes", "bytes moved"),
      errors_(this, "errors", "queues stopped on an error"),
      reduced_bytes_(this, "reduced_bytes", "bytes reduced into their destination (TRN3_DESC_REDUCE)"),
      dispatch_(this->name(), [this] { dispatch(); }) {
    if (engines.get() > queues.get())
        throw config_error(fmt::format("param {} = {}: more engines than queues ({} = {})", engines.name(),
                                       engines.get(), queues.name(), queues.get()));
    queues_.resize(queues.get());
    for (unsigned q = 0; q < queues_.size(); ++q) {
        const std::uint64_t b = std::uint64_t(TRN3_DMA_QUEUE_BLOCK_SIZE) * q;
        auto add = [&](const char* leaf, std::uint64_t off, unsigned width, trn3::access a, const char* d) {
            regs_owned_.push_back(std::make_unique<reg>(regs, fmt::format("q{}_{}", q, leaf), b + off, width, 0, a, d));
            return regs_owned_.back().get();
        };
        queue& qu = queues_[q];
        qu.ring_base = add("ring_base", TRN3_DMA_RING_BASE, 8, trn3::access::rw, "descriptor ring address");
        qu.ring_size = add("ring_size", TRN3_DMA_RING_SIZE, 4, trn3::access::rw, "ring entries (a power of two)");
        qu.tail = add("tail", TRN3_DMA_TAIL, 4, trn3::access::rw, "producer index: the doorbell");
        qu.head = add("head", TRN3_DMA_HEAD, 4, trn3::access::ro, "consumer index: descriptors done");
        qu.status = add("status", TRN3_DMA_STATUS, 4, trn3::access::ro, "state | error << 8");
        qu.cpl_base = add("cpl_base", TRN3_DMA_CPL_BASE, 8, trn3::access::rw, "completion records");
        qu.control = add("control", TRN3_DMA_CONTROL, 4, trn3::access::rw, "bit 0 enable, bit 1 ring in device memory");
        // What was read ahead goes when software moves the ring or sets TAIL
        // back (it may rewrite those entries).
        qu.ring_base->on_write([this, q](reg&, std::uint64_t) { drop_read_ahead(q); });
        qu.ring_size->on_write([this, q](reg&, std::uint64_t) { drop_read_ahead(q); });
        qu.tail->on_write([this, q](reg& r, std::uint64_t) {
            queue& me = queues_[q];
            if (static_cast<std::uint32_t>(r.value()) - me.cached_from < me.cached.size()) drop_read_ahead(q);
            ring();
        });
        qu.control->on_write([this, q](reg& r, std::uint64_t old) {
            drop_read_ahead(q);  // the driver may rewrite the entries (recovery)
            // Enabling a stopped queue restarts it.
            if ((r.value() & TRN3_DMA_CONTROL_ENABLE) && !(old & TRN3_DMA_CONTROL_ENABLE) &&
                TRN3_DMA_STATUS_STATE(queues_[q].status->value()) == TRN3_DMA_STATE_ERROR)
                queues_[q].status->set(TRN3_DMA_STATE_IDLE);
            ring();
        });
        qu.track = timeline::instance().track_of(*this, fmt::format(".q{}", q));
    }
    engines_.resize(engines.get());
    for (std::uint64_t e = 0; e < engines.get(); ++e)
        sc_core::sc_spawn([this, e] { run(engines_[e]); }, fmt::format("engine{}", e).c_str());
}

void dma_engine::ring() { dispatch_.request(); }

void dma_engine::fabric_progress() {
    // Only a queue held by a wait cares (the engines look at every queue when woken).
    for (const queue& qu : queues_)
        if (qu.waiting) return ring();
}

bool dma_engine::has_descriptors(const queue& qu) {
    return (qu.control->value() & TRN3_DMA_CONTROL_ENABLE) &&
           TRN3_DMA_STATUS_STATE(qu.status->value()) != TRN3_DMA_STATE_ERROR &&
           static_cast<std::uint32_t>(qu.head->value()) != static_cast<std::uint32_t>(qu.tail->value());
}

std::uint32_t dma_engine::pending_word(unsigned w) const {
    std::uint32_t bits = 0;
    for (unsigned i = 0; i < 32 && 32 * w + i < queues_.size(); ++i)
        if (has_descriptors(queues_[32 * w + i])) bits |= 1u << i;
    return bits;
}

bool dma_engine::ready(unsigned q) const {
    const queue& qu = queues_[q];
    const std::uint32_t head = static_cast<std::uint32_t>(qu.head->value());
    if (qu.busy || !has_descriptors(qu) || qu.ring_size->value() == 0) return false;
    // A WAIT_FABRIC descriptor not yet satisfied (no count at all: never) waits for fabric_progress().
    return !(qu.waiting && qu.waiting_at == head &&
             (!fabric_rx_bytes || fabric_rx_bytes(qu.waiting_on) < qu.waiting_for));
}

void dma_engine::dispatch() {
    // Idle engines in their order, each to the next ready queue after the
    // last one given out (round robin). Once a look over every queue finds
    // none ready, the other idle engines would find none either.
    for (engine& e : engines_) {
        if (e.queue >= 0) continue;
        const unsigned n = static_cast<unsigned>(queues_.size());
        bool given = false;
        for (unsigned i = 0; i < n && !given; ++i) {
            const unsigned q = (next_ + i) % n;
            if (!ready(q)) continue;
            queues_[q].busy = true;
            ++busy_queues_;
            e.queue = static_cast<int>(q);
            e.go.notify();
            next_ = (q + 1) % n;
            given = true;
        }
        if (!given) return;
    }
}

void dma_engine::run(engine& e) {
    for (;;) {
        wait(e.go);
        const unsigned q = static_cast<unsigned>(e.queue);
        serve(e, q);
        queues_[q].busy = false;
        --busy_queues_;
        e.queue = -1;
        dispatch_.request();  // this engine is free; the queue may have more
    }
}

void dma_engine::take_turn(unsigned queue) {
    turns_.insert(queue);
    wait(sc_core::SC_ZERO_TIME);  // every engine due at this instant has asked by now
    while (*turns_.begin() != queue) wait(turn_);
    turns_.erase(queue);
    turn_.notify(sc_core::SC_ZERO_TIME);
}

bool dma_engine::transfer(bool host_side, tlm::tlm_command cmd, std::uint64_t address, std::uint8_t* data,
                          std::uint64_t n, const access& a, const numerics::reduction* reduce, sc_time* done) {
    tlm::tlm_generic_payload tx;
    sc_time delay;
    set_access(tx, cmd, address, data, static_cast<unsigned>(n));
    fabric_write tag(static_cast<std::uint8_t>(a.channel), reduce, static_cast<std::uint8_t>(a.traffic_class),
                     a.operand);
    timing_only no_data;
    const bool tagged = !host_side && cmd == tlm::TLM_WRITE_COMMAND;
    if (tagged) tx.set_extension(&tag);
    if (a.timing) tx.set_extension(&no_data);
    // Engines that access at the same instant go in queue order (not in
    // SystemC's order of their wake-ups, which depends on what ran before).
    if (busy_queues_ > 1) take_turn(a.queue);
    (host_side ? host : device)->b_transport(tx, delay);
    if (tagged) tx.clear_extension(&tag);
    if (a.timing) tx.clear_extension(&no_data);
    if (done) *done = sc_core::sc_time_stamp() + delay;  // the target has taken the data: the buffer is free
    else wait(delay);
    return tx.get_response_status() == tlm::TLM_OK_RESPONSE;
}

bool dma_engine::reduce_to(std::uint64_t address, std::uint8_t* data, std::uint64_t n, const access& a,
                           const numerics::reduction& r, sc_time* done) {
    reduced_bytes_ += n;
    if (address >= TRN3_FABRIC_ADDR(0, 0))
        return transfer(false, tlm::TLM_WRITE_COMMAND, address, data, n, a, &r, done);
    *done = sc_core::sc_time_stamp();  // read, reduced and written back before this returns
    if (a.timing)  // read and written back in the time they take, nothing reduced
        return transfer(false, tlm::TLM_READ_COMMAND, address, data, n, a) &&
               transfer(false, tlm::TLM_WRITE_COMMAND, address, data, n, a);
    std::vector<std::uint8_t> current(n);
    if (!transfer(false, tlm::TLM_READ_COMMAND, address, current.data(), n, a)) return false;
    numerics::reduce_into(r, current.data(), data, n);
    return transfer(false, tlm::TLM_WRITE_COMMAND, address, current.data(), n, a);
}

void dma_engine::drop_read_ahead(unsigned q) {
    queues_[q].cached.clear();
    ++queues_[q].generation;  // a read ahead in flight is not kept
    queues_[q].waiting = false;  // a wait among those entries is forgotten too
}

void dma_engine::fail(unsigned q, std::uint32_t cause) {
    drop_read_ahead(q);
    queues_[q].status->set(TRN3_DMA_STATUS_VALUE(TRN3_DMA_STATE_ERROR, cause));
    ++errors_;
    log().warn("queue {} stopped: error {}", q, cause);
    if (queue_error) queue_error(q);
}

bool dma_engine::fetch(queue& qu, unsigned q, std::uint32_t head, std::uint32_t size, bool ring_on_host,
                       trn3_dma_descriptor& d) {
    const std::uint32_t ahead = head - qu.cached_from;
    if (ahead < qu.cached.size()) {
        d = qu.cached[ahead];
        return true;
    }
    const std::uint32_t index = head & (size - 1);
    const std::uint32_t pending = static_cast<std::uint32_t>(qu.tail->value()) - head;
    const std::uint32_t n = static_cast<std::uint32_t>(
        std::min<std::uint64_t>({descriptor_prefetch.get(), std::max(pending, 1u), size - index}));
    // Into a batch of its own: software may drop the read-ahead (CONTROL,
    // RING_BASE, RING_SIZE, TAIL set back) while this read waits.
    std::vector<trn3_dma_descriptor> batch(n);
    const std::uint64_t generation = qu.generation;
    if (!transfer(ring_on_host, tlm::TLM_READ_COMMAND, qu.ring_base->value() + sizeof d * index,
                  reinterpret_cast<std::uint8_t*>(batch.data()), sizeof d * n, access{q, q, false}))
        return false;
    d = batch[0];
    if (generation == qu.generation) {
        qu.cached = std::move(batch);
        qu.cached_from = head;
    }
    return true;
}

std::uint8_t* dma_engine::engine::buffer(std::uint64_t i, std::uint64_t count, std::uint64_t bytes) {
    if (buffers.size() < count || buffer_bytes < bytes) {
        buffer_bytes = std::max(buffer_bytes, bytes);
        const std::size_t n = std::max<std::size_t>(buffers.size(), count);
        buffers.clear();
        buffers.resize(n);
        for (auto& b : buffers) b.reset(new std::uint8_t[buffer_bytes]);  // NOLINT: not cleared on purpose
    }
    return buffers[i % count].get();
}

bool dma_engine::serve(engine& e, unsigned q) {
    queue& qu = queues_[q];
    const std::uint32_t size = static_cast<std::uint32_t>(qu.ring_size->value());
    const std::uint32_t head = static_cast<std::uint32_t>(qu.head->value());
    if (!has_descriptors(qu) || size == 0) return false;
    if (size & (size - 1)) {
        fail(q, TRN3_DMA_ERR_DESCRIPTOR);
        return false;
    }
    if (qu.waiting && qu.waiting_at == head && fabric_rx_bytes && fabric_rx_bytes(qu.waiting_on) < qu.waiting_for)
        return false;
    qu.waiting = false;
    qu.status->set(TRN3_DMA_STATE_RUNNING);
    const sc_time start = sc_core::sc_time_stamp();
    const bool ring_on_host = !(qu.control->value() & TRN3_DMA_CONTROL_DEVICE_RING);
    const std::uint32_t index = head & (size - 1);
    trn3_dma_descriptor d{};
    if (!fetch(qu, q, head, size, ring_on_host, d)) {
        fail(q, ring_on_host ? TRN3_DMA_ERR_HOST : TRN3_DMA_ERR_DEVICE);
        return false;
    }
    // The channel this descriptor's writes count on at their destination, or its wait waits on.
    const unsigned channel = TRN3_DESC_CHANNEL_OF(d.flags, q);
    if (d.flags & TRN3_DESC_WAIT_FABRIC) {
        // Not yet: leave the queue as it is; a landing fabric write rings the engine again.
        if (!fabric_rx_bytes || fabric_rx_bytes(channel) < d.src) {
            qu.status->set(TRN3_DMA_STATE_IDLE);
            qu.waiting = true;
            qu.waiting_at = head;
            qu.waiting_on = channel;
            qu.waiting_for = d.src;
            return false;
        }
        d.length = 0;  // nothing to move: the descriptor completes
    }
    wait(descriptor_cost.get());
    const bool src_host = d.flags & TRN3_DESC_SRC_HOST, dst_host = d.flags & TRN3_DESC_DST_HOST;
    std::uint32_t status = 0;
    std::optional<numerics::reduction> reduce;
    if (d.flags & TRN3_DESC_REDUCE) {
        reduce = numerics::reduction_of(TRN3_DESC_REDUCE_OP(d.flags), TRN3_DESC_REDUCE_TYPE(d.flags));
        if (!reduce || dst_host || d.length % numerics::element_bytes(reduce->type) != 0 ||
            chunk.get().bytes % numerics::element_bytes(reduce->type) != 0)
            status = TRN3_DMA_ERR_DESCRIPTOR;
    }
    // The operand lies where the landing chip says: only a fabric write reduces with one.
    const bool operand = (d.flags & TRN3_DESC_REDUCE_OPERAND) != 0;
    if (operand && (!reduce || dst_host || d.dst < TRN3_FABRIC_ADDR(0, 0))) status = TRN3_DMA_ERR_DESCRIPTOR;
    // Timing only: the accesses carry trn3::timing_only (targets time them
    // and move nothing) and point at a buffer no one reads.
    const access a{q, channel, (d.flags & TRN3_DESC_TIMING_ONLY) != 0, TRN3_DESC_TRAFFIC_CLASS_OF(d.flags), operand};
    // Pieces are read up to reads_ahead ahead of the one being written (one
    // buffer each: a buffer is free again once its write is issued, since
    // the target takes the data then); piece i is written when it has been
    // read and piece i - 1's write is done. A read that fails stops the
    // reads; the pieces read before it are still written, then the
    // descriptor fails.
    const std::uint64_t piece = chunk.get().bytes, pieces = (d.length + piece - 1) / piece;
    const std::uint64_t ahead = std::min<std::uint64_t>(reads_ahead.get(), std::max<std::uint64_t>(pieces, 1));
    std::vector<sc_time> read_done(ahead);
    const std::uint64_t largest = std::min<std::uint64_t>(piece, d.length);
    auto data_of = [&](std::uint64_t i) { return a.timing ? timing_buffer_.get(piece) : e.buffer(i, ahead, largest); };
    auto length_of = [&](std::uint64_t i) { return std::min<std::uint64_t>(piece, d.length - i * piece); };
    std::uint64_t readable = pieces;  // the first piece whose read failed
    auto read = [&](std::uint64_t i) {
        if (!transfer(src_host, tlm::TLM_READ_COMMAND, d.src + i * piece, data_of(i), length_of(i), a, nullptr,
                      &read_done[i % ahead]))
            readable = std::min(readable, i);
    };
    auto until = [this](const sc_time& t) {
        if (t > sc_core::sc_time_stamp()) wait(t - sc_core::sc_time_stamp());
    };
    sc_time written = sc_core::sc_time_stamp();  // the last write issued is done
    for (std::uint64_t i = 0; i < std::min(ahead, pieces) && i < readable && status == 0; ++i) read(i);
    for (std::uint64_t i = 0; i < readable && status == 0; ++i) {
        until(std::max(read_done[i % ahead], written));  // read, and writes one at a time
        const std::uint64_t off = i * piece;
        if (!(reduce ? reduce_to(d.dst + off, data_of(i), length_of(i), a, *reduce, &written)
                     : transfer(dst_host, tlm::TLM_WRITE_COMMAND, d.dst + off, data_of(i), length_of(i), a, nullptr,
                                &written)))
            status = dst_host ? TRN3_DMA_ERR_HOST : TRN3_DMA_ERR_DEVICE;
        else if (i + ahead < readable) read(i + ahead);
    }
    until(written);  // the last write done
    if (status == 0 && readable < pieces) status = src_host ? TRN3_DMA_ERR_HOST : TRN3_DMA_ERR_DEVICE;
    trn3_dma_completion c{status, d.length, d.user};
    if (!transfer(ring_on_host, tlm::TLM_WRITE_COMMAND, qu.cpl_base->value() + sizeof c * index,
                  reinterpret_cast<std::uint8_t*>(&c), sizeof c, access{q, q, false}) &&
        status == 0)
        status = ring_on_host ? TRN3_DMA_ERR_HOST : TRN3_DMA_ERR_DEVICE;  // the host would never see it done
    timeline::instance().slice(
        qu.track, fmt::format("{} B {}->{}", d.length, src_host ? "host" : "dev", dst_host ? "host" : "dev"), start,
        sc_core::sc_time_stamp());
    if (status != 0) {
        fail(q, status);
        return false;
    }
    qu.head->set(head + 1);
    ++descriptors_;
    bytes_ += d.length;
    qu.status->set(TRN3_DMA_STATE_IDLE);
    if ((d.flags & TRN3_DESC_INTERRUPT) && raise_msix) raise_msix(TRN3_MSIX_DMA(q));
    return true;
}

}  // namespace trn3::dma
