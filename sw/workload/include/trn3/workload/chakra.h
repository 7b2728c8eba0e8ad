// Chakra execution traces (the MLCommons format of PyTorch's execution-trace
// observer and ASTRA-sim) in and out of a workload graph, through protobuf
// and the schema in sw/workload/schema/chakra_et.proto.
//
// A trace is one file per rank, <prefix>.<rank>.et, each a GlobalMetadata
// message then length-delimited Node messages; gzip-compressed files (by
// their magic bytes, whatever their name) read the same. What each node
// becomes (docs/workloads.md):
//   COMP_NODE       a kernel when attribute "kernel" names one (shape: "m", "n", "k",
//                   "batch", "dtype"), else its recorded duration ("duration_ps",
//                   else duration_micros); FLOPs from the shape, else "num_ops"
//   MEM_LOAD_NODE, MEM_STORE_NODE, METADATA_NODE
//                   their recorded duration (ordering only when none)
//   COMM_COLL_NODE  a collective: "comm_type", "comm_size" (bytes), "pg_name",
//                   "comm_root", "comm_dtype", "comm_splits" (ALL_TO_ALL with
//                   per-peer sizes: all_to_allv)
//   COMM_SEND_NODE  "comm_dst", "comm_size", "comm_tag"
//   COMM_RECV_NODE  "comm_src", "comm_size", "comm_tag"
// Process groups are attributes of the global metadata named "pg:<name>",
// lists of ranks.
//
// Every defect is a config_error (one line, exit 2) naming the file and,
// where there is one, the node.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trn3/workload/graph.h"

namespace trn3::workload {

// Reads <prefix>.0.et, <prefix>.1.et, ...: `ranks` of them, or with ranks
// 0 every file from rank 0 up to the first that is missing.
graph read_chakra(const std::string& prefix, unsigned ranks = 0);

// The same from files' contents in memory, rank by rank (each with the
// name errors give it).
graph parse_chakra(const std::vector<std::pair<std::string, std::vector<std::uint8_t>>>& files);

// Writes g as <prefix>.<rank>.et, one per rank (gzip-compressed with
// `gzip`); every file checked as it is written.
void write_chakra(const graph& g, const std::string& prefix, bool gzip = false);

// The name of rank r's file.
std::string chakra_file(const std::string& prefix, unsigned r);

}  // namespace trn3::workload
