// BLEST's yardstick driver (../../../../shared/tools/blest/bfs_blest.cu, BLEST's own headers and
// kernels unchanged) with a second clock, switched on by BLEST_DEVICE_CLOCK=1: CUDA events around
// its one cooperative launch, the stream held until the launch is queued (cuStreamWaitValue32 on a
// mapped host word, released after the stop event is queued), so that the clock runs from the
// GPU's start of the search to its end, without the host's launch call and synchronize, which
// BLEST's own clock and this project's include. With the switch on, the driver prints a second
// line, `device_median_ms=X device_min_ms=Y device_max_ms=Z`; BLEST's own clock (host wall clock
// around the launch and its synchronize) then also covers these few calls, so compare its own
// clock from runs without the switch.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace device_clock
{
using WaitValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

static std::vector<float> ms;
static cudaEvent_t events[2];
static bool pending = false;
static volatile uint32_t* word = nullptr;
static CUdeviceptr wordOnDevice = 0;
static uint32_t ticket = 0;
static WaitValue32 waitValue = nullptr;

static bool on()
{
    static int v = -1;
    if (v < 0)
    {
        const char* e = std::getenv("BLEST_DEVICE_CLOCK");
        v = (e && e[0] == '1') ? 1 : 0;
    }
    return v == 1;
}

static void fail(const char* what)
{
    std::fprintf(stderr, "[device_clock] %s failed\n", what);
    std::exit(5);
}

static void collect()
{
    if (!pending) return;
    if (cudaEventSynchronize(events[1]) != cudaSuccess) fail("cudaEventSynchronize");
    float t = 0.0f;
    if (cudaEventElapsedTime(&t, events[0], events[1]) != cudaSuccess) fail("cudaEventElapsedTime");
    ms.push_back(t);
    pending = false;
}

static void report()
{
    collect();
    if (ms.empty()) return;
    std::vector<float> s = ms;
    std::sort(s.begin(), s.end());
    size_t k = s.size();
    double median = (k % 2) ? s[k / 2] : 0.5 * (s[k / 2 - 1] + s[k / 2]);
    std::printf("device_median_ms=%.6f device_min_ms=%.6f device_max_ms=%.6f\n", median, (double)s[0],
                (double)s[k - 1]);
    std::fflush(stdout);
}

static void setUp()
{
    void* p = nullptr;
    if (cudaHostAlloc(&p, sizeof(uint32_t), cudaHostAllocMapped) != cudaSuccess) fail("cudaHostAlloc");
    word = static_cast<volatile uint32_t*>(p);
    *word = 0;
    if (cudaHostGetDevicePointer(reinterpret_cast<void**>(&wordOnDevice), p, 0) != cudaSuccess)
        fail("cudaHostGetDevicePointer");
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", reinterpret_cast<void**>(&waitValue), 12000,
                                         cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
        fail("finding cuStreamWaitValue32");
    if (cudaEventCreate(&events[0]) != cudaSuccess || cudaEventCreate(&events[1]) != cudaSuccess)
        fail("cudaEventCreate");
    std::atexit(report);
}

static cudaError_t cooperativeLaunch(const void* f, dim3 grid, dim3 block, void** args, size_t shared,
                                     cudaStream_t stream)
{
    if (!on()) return ::cudaLaunchCooperativeKernel(f, grid, block, args, shared, stream);
    if (!word) setUp();
    collect();
    ++ticket;
    if (waitValue(reinterpret_cast<CUstream>(stream), wordOnDevice, ticket, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS)
        fail("cuStreamWaitValue32");
    cudaEventRecord(events[0], stream);
    cudaError_t err = ::cudaLaunchCooperativeKernel(f, grid, block, args, shared, stream);
    cudaEventRecord(events[1], stream);
    __sync_synchronize();
    *word = ticket;  // the GPU goes on
    pending = (err == cudaSuccess);
    return err;
}
}  // namespace device_clock

#define cudaLaunchCooperativeKernel device_clock::cooperativeLaunch
#include "bfs_blest.cu"
