frobnicate tensor
