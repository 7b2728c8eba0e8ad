// Files the user names (configs, firmware images, outputs): read and written
// with every failure a one-line config_error naming the file, never a C++
// library message, a hang on an endless device, or a silent loss.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trn3 {

// The whole of a regular file of at most `max_bytes` (a directory, a device
// such as /dev/zero, or a larger file is refused). `what` names it in errors
// ("config file", "firmware").
std::vector<std::uint8_t> read_user_file(const std::string& path, const std::string& what,
                                         std::uint64_t max_bytes = 64ull << 20);
std::string read_user_text(const std::string& path, const std::string& what, std::uint64_t max_bytes = 64ull << 20);

// Writes `text` to `path`, checking that every byte reached the file (a full
// disk, /dev/full, a missing directory are errors).
void write_user_file(const std::string& path, const std::string& what, const std::string& text);
void write_user_file(const std::string& path, const std::string& what, const void* data, std::size_t bytes);
// Throws config_error unless `path` could be written (its folder exists and
// is writable); checks before a long run instead of losing its result after.
void check_writable(const std::string& path, const std::string& what);

// A value as error messages quote it: at most `max` characters, then "...";
// control characters written out (\\n, \\xNN), so the message stays one line.
std::string quoted_excerpt(const std::string& value, std::size_t max = 64);

}  // namespace trn3
