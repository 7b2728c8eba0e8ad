// Open MPI behind trn3::ranks (mpi_ranks.h).
#include "mpi_ranks.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <mpi.h>

namespace trn3 {
namespace {

void check(int rc, const char* what) {
    if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI: ") + what + " failed");
}

// Counts and displacements of MPI_Alltoallv / MPI_Allgatherv are ints: buffers past 2 GiB are refused.
int count_of(std::size_t n) {
    if (n > static_cast<std::size_t>(INT32_MAX)) throw std::runtime_error("MPI: a buffer of over 2 GiB at a boundary");
    return static_cast<int>(n);
}

class mpi_ranks final : public ranks {
public:
    mpi_ranks() {
        int r = 0, n = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Comm_size(MPI_COMM_WORLD, &n);
        rank_ = static_cast<unsigned>(r);
        size_ = static_cast<unsigned>(n);
    }
    ~mpi_ranks() override { MPI_Finalize(); }
    unsigned rank() const override { return rank_; }
    unsigned size() const override { return size_; }

    std::vector<byte_buffer> exchange(std::vector<byte_buffer> to) override {
        std::vector<int> send_counts(size_), recv_counts(size_), send_at(size_), recv_at(size_);
        std::size_t total = 0;
        for (unsigned r = 0; r < size_; ++r) {
            send_counts[r] = r == rank_ ? 0 : count_of(to[r].size());
            send_at[r] = count_of(total);
            total += static_cast<std::size_t>(send_counts[r]);
        }
        check(MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD),
              "MPI_Alltoall");
        byte_buffer out(total);
        for (unsigned r = 0; r < size_; ++r)
            if (send_counts[r]) std::memcpy(out.data() + send_at[r], to[r].data(), to[r].size());
        std::size_t in_total = 0;
        for (unsigned r = 0; r < size_; ++r) {
            recv_at[r] = count_of(in_total);
            in_total += static_cast<std::size_t>(recv_counts[r]);
        }
        byte_buffer in(in_total);
        check(MPI_Alltoallv(out.data(), send_counts.data(), send_at.data(), MPI_BYTE, in.data(), recv_counts.data(),
                            recv_at.data(), MPI_BYTE, MPI_COMM_WORLD),
              "MPI_Alltoallv");
        std::vector<byte_buffer> from(size_);
        for (unsigned r = 0; r < size_; ++r)
            from[r].assign(in.begin() + recv_at[r], in.begin() + recv_at[r] + recv_counts[r]);
        return from;
    }

    std::vector<byte_buffer> all_gather(const byte_buffer& mine) override {
        const int n = count_of(mine.size());
        std::vector<int> counts(size_), at(size_);
        check(MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Allgather");
        std::size_t total = 0;
        for (unsigned r = 0; r < size_; ++r) {
            at[r] = count_of(total);
            total += static_cast<std::size_t>(counts[r]);
        }
        byte_buffer all(total);
        check(MPI_Allgatherv(mine.data(), n, MPI_BYTE, all.data(), counts.data(), at.data(), MPI_BYTE, MPI_COMM_WORLD),
              "MPI_Allgatherv");
        std::vector<byte_buffer> out(size_);
        for (unsigned r = 0; r < size_; ++r) out[r].assign(all.begin() + at[r], all.begin() + at[r] + counts[r]);
        return out;
    }

    [[noreturn]] void abort_job(int code) override {
        MPI_Abort(MPI_COMM_WORLD, code);
        std::exit(code);
    }

private:
    unsigned rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<ranks> mpi_ranks_if_launched(int& argc, char**& argv) {
    // Open MPI's launcher (mpirun / orterun) sets these; a plain run has neither.
    if (!std::getenv("OMPI_COMM_WORLD_SIZE") && !std::getenv("PMIX_RANK")) return nullptr;
    check(MPI_Init(&argc, &argv), "MPI_Init");
    return std::make_unique<mpi_ranks>();
}

}  // namespace trn3
