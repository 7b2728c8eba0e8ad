// The physical layer of a link: what a generation's lanes carry, the flit
// format, and which width a link trains to given its healthy lanes.
//
//   gen5    32 GT/s NRZ, 128b/130b: 3.938 GB/s per lane per direction; no
//           flits: each TLP adds 4 B framing token + sequence and 4 B LCRC.
//   gen6    64 GT/s PAM4: 8 GB/s per lane per direction; flit mode: 256-B
//           flits carry 236 B of TLP bytes (6 B data-link payload, 8 B CRC,
//           6 B FEC); a receiver checks a whole flit before using it.
//   ualink  200 Gb/s lanes: 25 GB/s per lane per direction; 640-B link
//           flits carrying 616 B of transaction bytes (our assumption:
//           UALink 1.0's DL header and CRC are not public in detail; params).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "trn3/core/param.h"

namespace trn3::pcie {

enum class generation { gen5, gen6, ualink };

struct phy_spec {
    const char* name;
    double lane_bytes_per_second;  // per direction, after line coding
    bool flit_mode;
    unsigned flit_bytes;  // flit mode: flit size on the wire
    unsigned flit_payload_bytes;  // flit mode: TLP bytes a flit carries
    unsigned tlp_framing_bytes;  // non-flit: per-TLP framing + LCRC
    unsigned speed_code;  // PCIe link-status speed code: TRN3_PCIE_SPEED_* (spec/pci.h)
    double transfers_giga;  // GT/s, for listings
};

const phy_spec& spec_of(generation g);
// "gen5", "gen6", "ualink"; throws config_error naming `what` otherwise.
generation parse_generation(const std::string& text, const std::string& what);
const char* generation_text(generation g);  // "gen5", "gen6", "ualink"
// The generation params' choices: gen5, gen6, ualink.
one_of<std::string> generation_choices();

// Lane numbers from "3,17,40-55" ("" = none); throws config_error naming `what`.
std::set<unsigned> parse_lanes(const std::string& text, unsigned lane_count, const std::string& what);

struct width_choice {
    unsigned width = 0;  // lanes the link runs on; 0 = cannot train
    unsigned spares_used = 0;  // spare lanes standing in for failed active ones
};

// The widest width a link of `lanes` active and `spare_lanes` spare lanes
// trains to with `failed` lanes (numbered 0 .. lanes + spare_lanes - 1).
// With spares (NeuronLink backplane bundles), any healthy lane can stand in
// for any failed one: the link keeps its width while failures <= spares.
// Beyond that, and on links without spares, the width is the widest allowed
// width whose lanes are healthy: without spares the lanes must be
// contiguous from lane 0 or (lane reversal) end at the last lane, as in
// PCIe. Allowed widths: 1, 2, 4, 8, 16, 32, every multiple of 8 up to
// `lanes`, and `lanes` itself.
width_choice choose_width(unsigned lanes, unsigned spare_lanes, const std::set<unsigned>& failed);

}  // namespace trn3::pcie
