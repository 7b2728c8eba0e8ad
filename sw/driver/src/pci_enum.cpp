#include "trn3/driver/pci_enum.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <stdexcept>

namespace trn3::driver {

std::string bdf_name(std::uint16_t bdf) {
    return fmt::format("{:02x}:{:02x}.{:x}", TRN3_PCI_BDF_BUS(bdf), TRN3_PCI_BDF_DEV(bdf), TRN3_PCI_BDF_FN(bdf));
}

namespace {

constexpr std::uint64_t window_granule = 1ull << 20;  // bridge windows decode in 1 MiB units
constexpr unsigned max_capabilities = 48;  // (256 - 0x40) / 4: more means a loop
constexpr unsigned max_bus = 0xFF;

// x rounded up to a multiple of `align` (a power of two), or nothing if that
// does not fit in 64 bits.
std::optional<std::uint64_t> align_up(std::uint64_t x, std::uint64_t align) {
    const std::uint64_t rem = x & (align - 1);
    if (rem == 0) return x;
    const std::uint64_t step = align - rem;
    if (x > UINT64_MAX - step) return std::nullopt;
    return x + step;
}

// "16M", "4K", "256B": the largest unit that divides the size exactly.
std::string size_name(std::uint64_t size) {
    static constexpr const char* units[] = {"B", "K", "M", "G", "T", "P", "E"};
    unsigned u = 0;
    while (u + 1 < std::size(units) && size != 0 && (size & 1023) == 0) {
        size >>= 10;
        ++u;
    }
    return fmt::format("{}{}", size, units[u]);
}

// A bump allocator over one address pool: [next, end).
struct pool_cursor {
    const char* name;
    std::uint64_t next;
    std::uint64_t end;
};

// A bridge window as the walker assigned it (limit inclusive).
struct window {
    std::uint64_t base, limit;
};

class walker {
public:
    walker(config_access& cfg, const address_pool& pool)
        : cfg_(cfg), mem32_{"32-bit memory", pool.mem32_base, pool.mem32_base + pool.mem32_size},
          mem64_{"64-bit memory", pool.mem64_base, pool.mem64_base + pool.mem64_size} {
        if (pool.mem32_size > UINT64_MAX - pool.mem32_base || mem32_.end > (1ull << 32))
            throw std::runtime_error("PCI enumeration: the 32-bit memory pool must lie below 4 GiB");
        if (pool.mem64_size > UINT64_MAX - pool.mem64_base)
            throw std::runtime_error("PCI enumeration: the 64-bit memory pool wraps around");
    }

    std::vector<pci_function> run() {
        scan_bus(0, -1, 0);
        return std::move(found_);
    }

private:
    // Configuration accesses, each of its natural width.
    std::uint8_t read8(std::uint16_t bdf, unsigned off) { return static_cast<std::uint8_t>(cfg_.read(bdf, off, 1)); }
    std::uint16_t read16(std::uint16_t bdf, unsigned off) { return static_cast<std::uint16_t>(cfg_.read(bdf, off, 2)); }
    std::uint32_t read32(std::uint16_t bdf, unsigned off) { return cfg_.read(bdf, off, 4); }
    void write8(std::uint16_t bdf, unsigned off, std::uint8_t v) { cfg_.write(bdf, off, 1, v); }
    void write16(std::uint16_t bdf, unsigned off, std::uint16_t v) { cfg_.write(bdf, off, 2, v); }
    void write32(std::uint16_t bdf, unsigned off, std::uint32_t v) { cfg_.write(bdf, off, 4, v); }

    bool present(std::uint16_t bdf) { return read16(bdf, TRN3_PCI_VENDOR_ID) != 0xFFFF; }

    // Probes every device on `bus`; functions 1..7 only on multi-function devices.
    void scan_bus(unsigned bus, int parent, int depth) {
        for (unsigned dev = 0; dev < TRN3_PCI_DEVICES_PER_BUS; ++dev) {
            const std::uint16_t fn0 = TRN3_PCI_BDF(bus, dev, 0);
            if (!present(fn0)) continue;
            const bool multi = (read8(fn0, TRN3_PCI_HEADER_TYPE) & TRN3_PCI_HEADER_TYPE_MULTI_FUNCTION) != 0;
            for (unsigned fn = 0; fn < (multi ? TRN3_PCI_FUNCTIONS : 1u); ++fn) {
                const std::uint16_t bdf = TRN3_PCI_BDF(bus, dev, fn);
                if (fn == 0 || present(bdf)) probe(bdf, parent, depth);
            }
        }
    }

    // Identifies, sizes and assigns one function (and, for a bridge, all
    // below it). Appends it to found_ before its children.
    void probe(std::uint16_t bdf, int parent, int depth) {
        pci_function f;
        f.bdf = bdf;
        f.vendor = read16(bdf, TRN3_PCI_VENDOR_ID);
        f.device = read16(bdf, TRN3_PCI_DEVICE_ID);
        const std::uint32_t class_rev = read32(bdf, TRN3_PCI_CLASS_REV);
        f.class_code = class_rev >> 8;
        f.revision = static_cast<std::uint8_t>(class_rev);
        const unsigned layout = TRN3_PCI_HEADER_TYPE_LAYOUT(read8(bdf, TRN3_PCI_HEADER_TYPE));
        f.bridge = layout == TRN3_PCI_HEADER_TYPE_BRIDGE;
        f.parent = parent;
        f.depth = depth;
        read_capabilities(f);

        // No memory decoding while the BARs hold sizing patterns.
        const std::uint16_t command = read16(bdf, TRN3_PCI_COMMAND);
        write16(bdf, TRN3_PCI_COMMAND, command & ~TRN3_PCI_COMMAND_MEMORY);
        if (layout == TRN3_PCI_HEADER_TYPE_ENDPOINT || layout == TRN3_PCI_HEADER_TYPE_BRIDGE)
            assign_bars(f, layout == TRN3_PCI_HEADER_TYPE_ENDPOINT ? 6 : 2);

        const int index = static_cast<int>(found_.size());
        found_.push_back(std::move(f));
        if (layout == TRN3_PCI_HEADER_TYPE_BRIDGE)
            configure_bridge(index);  // found_ may grow: keep the index, not a reference

        write16(bdf, TRN3_PCI_COMMAND, command | TRN3_PCI_COMMAND_MEMORY | TRN3_PCI_COMMAND_BUS_MASTER);
    }

    // Finds the PCI Express and MSI-X capabilities in the standard list.
    void read_capabilities(pci_function& f) {
        const std::uint16_t bdf = f.bdf;
        if ((read16(bdf, TRN3_PCI_STATUS) & TRN3_PCI_STATUS_CAP_LIST) == 0) return;
        unsigned pcie = 0, msix = 0;
        unsigned ptr = read8(bdf, TRN3_PCI_CAP_PTR) & 0xFC;
        // Capabilities live in 0x40..0xFF; a pointer below that ends the list
        // (0 is the normal end), and the entry count bounds a looping list.
        for (unsigned n = 0; ptr >= 0x40 && n < max_capabilities; ++n) {
            const std::uint16_t header = read16(bdf, ptr);  // ID, next pointer
            const unsigned id = header & 0xFF;
            if (id == TRN3_PCI_CAP_ID_PCIE && pcie == 0) pcie = ptr;
            if (id == TRN3_PCI_CAP_ID_MSIX && msix == 0) msix = ptr;
            ptr = (header >> 8) & 0xFC;
        }

        if (pcie != 0) {
            const std::uint16_t caps = read16(bdf, pcie + TRN3_PCIE_CAPS);
            f.port_type = TRN3_PCIE_CAPS_TYPE(caps);
            const std::uint32_t link_cap = read32(bdf, pcie + TRN3_PCIE_LINK_CAP);
            f.max_speed = TRN3_PCIE_LINK_SPEED(link_cap);
            f.max_width = TRN3_PCIE_LINK_WIDTH(link_cap);
            const std::uint16_t link_status = read16(bdf, pcie + TRN3_PCIE_LINK_STATUS);
            f.link_speed = TRN3_PCIE_LINK_SPEED(link_status);
            f.link_width = TRN3_PCIE_LINK_WIDTH(link_status);
            f.dl_active = (link_status & TRN3_PCIE_LINK_DL_ACTIVE) != 0;
            // Link Status 2 exists from capability version 2 on.
            if (TRN3_PCIE_CAPS_VERSION(caps) >= TRN3_PCIE_CAP_VERSION)
                f.flit_mode = (read16(bdf, pcie + TRN3_PCIE_LINK_STATUS2) & TRN3_PCIE_LINK_STATUS2_FLIT_MODE) != 0;
        }
        if (msix != 0) f.msix_vectors = (read16(bdf, msix + TRN3_MSIX_CONTROL) & TRN3_MSIX_TABLE_SIZE_MASK) + 1;
    }

    // Sizes the memory BARs in the first `slots` slots and assigns each an
    // address from its pool. I/O BARs and unimplemented (size 0) BARs are
    // left alone.
    void assign_bars(pci_function& f, unsigned slots) {
        const std::uint16_t bdf = f.bdf;
        for (unsigned i = 0; i < slots; ++i) {
            const unsigned off = TRN3_PCI_BAR(i);
            const std::uint32_t lo = read32(bdf, off);
            if (lo & TRN3_PCI_BAR_IO) continue;
            const bool is64 = (lo & TRN3_PCI_BAR_TYPE) == TRN3_PCI_BAR_MEM64;
            if (is64 && i + 1 == slots) break;  // malformed: no upper half

            // Size: all ones into the BAR (both halves of a 64-bit one); the
            // read-only low address bits read back as zeros. Then put the
            // original value back.
            const std::uint32_t hi = is64 ? read32(bdf, off + 4) : 0;
            write32(bdf, off, 0xFFFFFFFFu);
            if (is64) write32(bdf, off + 4, 0xFFFFFFFFu);
            std::uint64_t mask = read32(bdf, off) & ~std::uint64_t(TRN3_PCI_BAR_FLAGS);
            if (is64) mask |= static_cast<std::uint64_t>(read32(bdf, off + 4)) << 32;
            write32(bdf, off, lo);
            if (is64) write32(bdf, off + 4, hi);
            // A 32-bit BAR's upper address bits are implicitly all writable.
            if (!is64 && mask != 0) mask |= 0xFFFFFFFF00000000ull;
            // size = ~mask + 1, taken as the lowest writable bit so that a
            // mask with holes still yields a power of two; 0 if unimplemented.
            const std::uint64_t size = mask & (~mask + 1);

            const unsigned index = i;
            if (is64) ++i;  // the upper half takes the next slot
            if (size == 0) continue;

            // Only a 64-bit prefetchable BAR can live above 4 GiB: a bridge's
            // non-prefetchable window is 32-bit, so every other BAR comes from mem32.
            const bool prefetchable = (lo & TRN3_PCI_BAR_PREFETCH) != 0;
            const std::uint64_t base = allocate(is64 && prefetchable ? mem64_ : mem32_, size,
                                                fmt::format("BAR{} of {}", index, bdf_name(bdf)));
            write32(bdf, off, static_cast<std::uint32_t>(base));
            if (is64) write32(bdf, off + 4, static_cast<std::uint32_t>(base >> 32));
            f.bars.push_back({static_cast<int>(index), base, size, is64, prefetchable});
        }
    }

    // `size` bytes aligned to `size` (a power of two) from `pool`.
    std::uint64_t allocate(pool_cursor& pool, std::uint64_t size, const std::string& what) {
        const std::optional<std::uint64_t> base = align_up(pool.next, size);
        if (!base || *base > pool.end || size > pool.end - *base)
            throw std::runtime_error(
                fmt::format("PCI enumeration: {} pool exhausted ({} needs {})", pool.name, what, size_name(size)));
        pool.next = *base + size;
        return *base;
    }

    // Bus numbers, the scan below and the windows of the bridge found_[index].
    void configure_bridge(int index) {
        const std::uint16_t bdf = found_[index].bdf;
        if (next_bus_ > max_bus)
            throw std::runtime_error(
                fmt::format("PCI enumeration: out of bus numbers (more than 255 buses needed at {})", bdf_name(bdf)));
        const unsigned secondary = next_bus_++;
        write8(bdf, TRN3_PCI_PRIMARY_BUS, static_cast<std::uint8_t>(TRN3_PCI_BDF_BUS(bdf)));
        write8(bdf, TRN3_PCI_SECONDARY_BUS, static_cast<std::uint8_t>(secondary));
        write8(bdf, TRN3_PCI_SUBORDINATE_BUS, 0xFF);  // open while scanning below

        const pool_cursor saved32 = mem32_, saved64 = mem64_;
        const std::uint64_t mem_start = enter_window(mem32_);
        const std::uint64_t pref_start = enter_window(mem64_);

        scan_bus(secondary, index, found_[index].depth + 1);

        const unsigned subordinate = next_bus_ - 1;
        write8(bdf, TRN3_PCI_SUBORDINATE_BUS, static_cast<std::uint8_t>(subordinate));
        const std::optional<window> mem = leave_window(mem32_, saved32, mem_start, bdf);
        const std::optional<window> pref = leave_window(mem64_, saved64, pref_start, bdf);

        // Non-prefetchable window: address bits 31:20 in register bits 15:4.
        // Closed, the registers decode to base 0xFFF00000 > limit 0x000FFFFF.
        const window mem_regs = mem.value_or(window{0xFFF00000ull, 0x000FFFFFull});
        if (mem) {
            write16(bdf, TRN3_PCI_MEMORY_BASE, static_cast<std::uint16_t>(TRN3_PCI_WINDOW_FIELD(mem->base)));
            write16(bdf, TRN3_PCI_MEMORY_LIMIT, static_cast<std::uint16_t>(TRN3_PCI_WINDOW_FIELD(mem->limit)));
        } else {
            write16(bdf, TRN3_PCI_MEMORY_BASE, TRN3_PCI_WINDOW_MASK);
            write16(bdf, TRN3_PCI_MEMORY_LIMIT, 0x0000);
        }
        // Prefetchable window: likewise, bits 3:0 = 1 (64-bit), bits 63:32 in
        // the upper registers.
        // Closed: base 0xFFFFFFFF_FFF00000 > limit 0x00000000_000FFFFF.
        const window pref_regs = pref.value_or(window{0xFFFFFFFFFFF00000ull, 0x00000000000FFFFFull});
        if (pref) {
            write16(bdf, TRN3_PCI_PREF_MEMORY_BASE,
                    static_cast<std::uint16_t>(TRN3_PCI_WINDOW_FIELD(pref->base) | TRN3_PCI_PREF_64BIT));
            write16(bdf, TRN3_PCI_PREF_MEMORY_LIMIT,
                    static_cast<std::uint16_t>(TRN3_PCI_WINDOW_FIELD(pref->limit) | TRN3_PCI_PREF_64BIT));
            write32(bdf, TRN3_PCI_PREF_BASE_UPPER, static_cast<std::uint32_t>(pref->base >> 32));
            write32(bdf, TRN3_PCI_PREF_LIMIT_UPPER, static_cast<std::uint32_t>(pref->limit >> 32));
        } else {
            write16(bdf, TRN3_PCI_PREF_MEMORY_BASE, TRN3_PCI_WINDOW_MASK);
            write16(bdf, TRN3_PCI_PREF_MEMORY_LIMIT, 0x0000);
            write32(bdf, TRN3_PCI_PREF_BASE_UPPER, 0xFFFFFFFFu);
            write32(bdf, TRN3_PCI_PREF_LIMIT_UPPER, 0x00000000u);
        }

        pci_function& f = found_[index];
        f.secondary = static_cast<std::uint8_t>(secondary);
        f.subordinate = static_cast<std::uint8_t>(subordinate);
        f.mem_base = mem_regs.base;
        f.mem_limit = mem_regs.limit;
        f.pref_base = pref_regs.base;
        f.pref_limit = pref_regs.limit;
    }

    // Aligns the cursor to the window granule: the window's base. A base past
    // the pool's end leaves nothing to allocate (any allocation then throws).
    static std::uint64_t enter_window(pool_cursor& pool) {
        pool.next = std::min(align_up(pool.next, window_granule).value_or(pool.end), pool.end);
        return pool.next;
    }

    // Ends the window opened at `start`: limit = cursor rounded up to the
    // granule, minus one. If nothing was assigned below there is no window
    // (it is programmed closed) and the cursor goes back to where it was
    // before the bridge, so the alignment costs no address space.
    static std::optional<window> leave_window(pool_cursor& pool, const pool_cursor& saved, std::uint64_t start,
                                              std::uint16_t bdf) {
        if (pool.next == start) {
            pool = saved;
            return std::nullopt;
        }
        const std::optional<std::uint64_t> end = align_up(pool.next, window_granule);
        if (!end || *end > pool.end)
            throw std::runtime_error(
                fmt::format("PCI enumeration: {} pool exhausted (window of bridge {})", pool.name, bdf_name(bdf)));
        pool.next = *end;
        return window{start, *end - 1};
    }

    config_access& cfg_;
    pool_cursor mem32_, mem64_;
    unsigned next_bus_ = 1;  // bus 0 is the root bus
    std::vector<pci_function> found_;
};

// "Gen6 64GT/s" for a link speed code.
std::string speed_name(unsigned code) {
    static constexpr const char* rates[] = {"2.5", "5", "8", "16", "32", "64"};
    if (code == 0 || code > std::size(rates)) return fmt::format("Gen? (speed code {})", code);
    return fmt::format("Gen{} {}GT/s", code, rates[code - 1]);
}

std::string port_name(unsigned type) {
    switch (type) {
    case TRN3_PCIE_TYPE_ENDPOINT: return "endpoint";
    case TRN3_PCIE_TYPE_ROOT_PORT: return "root port";
    case TRN3_PCIE_TYPE_UPSTREAM: return "upstream";
    case TRN3_PCIE_TYPE_DOWNSTREAM: return "downstream";
    default: return fmt::format("port type {}", type);
    }
}

std::string kind_name(const pci_function& f) {
    if ((f.class_code >> 8) == (TRN3_PCI_CLASS_BRIDGE_P2P >> 8))
        return f.port_type == ~0u ? "PCI bridge" : fmt::format("PCI bridge ({})", port_name(f.port_type));
    if ((f.class_code >> 16) == (TRN3_PCI_CLASS_ACCELERATOR >> 16)) return "accelerator";
    return fmt::format("class {:#08x}", f.class_code);
}

std::string window_name(std::uint64_t base, std::uint64_t limit) {
    if (base > limit) return "closed";
    return fmt::format("{:#x}-{:#x}", base, limit);
}

}  // namespace

std::vector<pci_function> enumerate(config_access& cfg, const address_pool& pool) { return walker(cfg, pool).run(); }

std::string lspci(const std::vector<pci_function>& functions) {
    std::string out;
    for (const pci_function& f : functions) {
        std::string line = fmt::format("{:{}}{} [{:04x}:{:04x}] {}", "", 2 * f.depth, bdf_name(f.bdf), f.vendor,
                                       f.device, kind_name(f));
        if (f.bridge)
            line += fmt::format(" bus {:02x}-{:02x} mem {} pref {}", f.secondary, f.subordinate,
                                window_name(f.mem_base, f.mem_limit), window_name(f.pref_base, f.pref_limit));
        for (const pci_bar& b : f.bars)
            line += fmt::format(" BAR{} {:#x} [{}{} {}]", b.index, b.base, b.is64 ? "64-bit" : "32-bit",
                                b.prefetchable ? " pref" : "", size_name(b.size));
        if (f.msix_vectors != 0) line += fmt::format(" MSI-X {}", f.msix_vectors);
        if (f.port_type != ~0u) {
            line += fmt::format("  {} x{} (max {} x{})", speed_name(f.link_speed), f.link_width,
                                speed_name(f.max_speed), f.max_width);
            if (f.flit_mode) line += " flit";
            if (f.dl_active) line += " DLActive";
        }
        out += line;
        out += '\n';
    }
    return out;
}

}  // namespace trn3::driver
