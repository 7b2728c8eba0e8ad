halt tensor
