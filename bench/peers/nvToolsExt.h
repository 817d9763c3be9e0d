/* CUDA 12 and later ship NVTX 3 only (header-only, under nvtx3/); a peer written against
 * NVTX 2's <nvToolsExt.h> gets the same calls from here. Ours: scripts/triangle-peers.sh puts
 * it on the include path. */
#include <nvtx3/nvToolsExt.h>
