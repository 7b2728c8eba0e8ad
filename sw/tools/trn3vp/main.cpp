#include <systemc>

#include "cli.h"
#include "mpi_ranks.h"
#include "trn3/core/entry.h"

int sc_main(int argc, char** argv) { return trn3::cli_main(argc, argv); }

// Under mpirun this process is one rank of a distributed run (docs/distributed.md).
int main(int argc, char** argv) {
    trn3::set_ranks(trn3::mpi_ranks_if_launched(argc, argv));
    const int rc = trn3::systemc_entry(argc, argv);
    trn3::set_ranks(nullptr);  // MPI_Finalize
    return rc;
}
