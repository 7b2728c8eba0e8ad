# cmake -DIN=<file> -DOUT=<file> -P digest.cmake: writes IN's SHA-256 (hex) to OUT.
file(SHA256 ${IN} digest)
file(WRITE ${OUT} "${digest}")
