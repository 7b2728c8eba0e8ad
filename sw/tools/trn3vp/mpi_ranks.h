// The ranks of a run launched by mpirun (Open MPI): installed by trn3vp's
// main when the launcher's environment says so, so one binary runs alone
// or as one process of many (docs/distributed.md).
#pragma once

#include <memory>

#include "trn3/core/ranks.h"

namespace trn3 {

// MPI's ranks when this process was started by mpirun (MPI_Init done), else
// null (no MPI call made: a plain run never pays MPI's start-up).
std::unique_ptr<ranks> mpi_ranks_if_launched(int& argc, char**& argv);

}  // namespace trn3
