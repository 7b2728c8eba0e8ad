#include "trn3/core/user_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "trn3/core/error.h"

namespace trn3 {

std::vector<std::uint8_t> read_user_file(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw config_error(fmt::format("{} '{}': cannot open it ({})", what, path, std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw config_error(fmt::format("{} '{}': not a regular file", what, path));
    }
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
        ::close(fd);
        throw config_error(
            fmt::format("{} '{}': {} bytes, more than the {} accepted", what, path, st.st_size, max_bytes));
    }
    std::vector<std::uint8_t> data(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < data.size()) {
        const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ::close(fd);
            throw config_error(fmt::format("{} '{}': read failed after {} bytes", what, path, got));
        }
        got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return data;
}

std::string read_user_text(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
    const auto bytes = read_user_file(path, what, max_bytes);
    return std::string(bytes.begin(), bytes.end());
}

void write_user_file(const std::string& path, const std::string& what, const std::string& text) {
    write_user_file(path, what, text.data(), text.size());
}

void write_user_file(const std::string& path, const std::string& what, const void* data, std::size_t bytes) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw config_error(fmt::format("{} '{}': cannot write it ({})", what, path, std::strerror(errno)));
    const bool wrote = bytes == 0 || std::fwrite(data, 1, bytes, f) == bytes;
    const bool flushed = std::fflush(f) == 0;
    const int err = errno;
    const bool closed = std::fclose(f) == 0;
    if (!wrote || !flushed || !closed)
        throw config_error(fmt::format("{} '{}': writing it failed ({})", what, path, std::strerror(err)));
}

void check_writable(const std::string& path, const std::string& what) {
    const std::size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    if (::access(dir.c_str(), W_OK) != 0)
        throw config_error(fmt::format("{} '{}': cannot write it ({}: {})", what, path, dir, std::strerror(errno)));
}

std::string quoted_excerpt(const std::string& value, std::size_t max) {
    // Control characters written out: a message stays one line.
    std::string text;
    for (std::size_t i = 0; i < value.size() && i < max; ++i) {
        const auto c = static_cast<unsigned char>(value[i]);
        if (c == '\n') text += "\\n";
        else if (c < 0x20 || c == 0x7f) text += fmt::format("\\x{:02x}", c);
        else text += value[i];
    }
    if (value.size() > max) text += fmt::format("... ({} characters)", value.size());
    return text;
}

}  // namespace trn3
