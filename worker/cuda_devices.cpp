// Device enumeration through the driver API, as nvidia-smi names devices ("GPU-<uuid>").
#include "worker/cuda_devices.h"

#include <dlfcn.h>

#include <cstdio>

namespace minifyd::worker {
namespace {

// The driver API's types, as cuda.h declares them (an int result, an int device handle).
using CudaResult = int;
struct CudaUuid {
  unsigned char bytes[16];
};

std::string format_uuid(const CudaUuid& uuid) {
  char text[64];
  const unsigned char* b = uuid.bytes;
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
                b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

}  // namespace

std::vector<protocol::DeviceInfo> visible_cuda_devices() {
  // Never closed: LibTorch uses the same driver for the life of the process.
  void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) return {};
  auto init = reinterpret_cast<CudaResult (*)(unsigned)>(::dlsym(driver, "cuInit"));
  auto get_count = reinterpret_cast<CudaResult (*)(int*)>(::dlsym(driver, "cuDeviceGetCount"));
  auto get_device = reinterpret_cast<CudaResult (*)(int*, int)>(::dlsym(driver, "cuDeviceGet"));
  auto get_name = reinterpret_cast<CudaResult (*)(char*, int, int)>(::dlsym(driver, "cuDeviceGetName"));
  auto get_uuid = reinterpret_cast<CudaResult (*)(CudaUuid*, int)>(::dlsym(driver, "cuDeviceGetUuid_v2"));
  if (get_uuid == nullptr) get_uuid = reinterpret_cast<CudaResult (*)(CudaUuid*, int)>(::dlsym(driver, "cuDeviceGetUuid"));
  int count = 0;
  if (!init || !get_count || !get_device || !get_name || init(0) != 0 || get_count(&count) != 0) return {};
  std::vector<protocol::DeviceInfo> devices;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    int device = 0;
    if (get_device(&device, ordinal) != 0) continue;
    char name[256] = {};
    get_name(name, sizeof name - 1, device);
    CudaUuid uuid{};
    std::string uuid_text = (get_uuid && get_uuid(&uuid, device) == 0) ? format_uuid(uuid) : "";
    devices.push_back({ordinal, name, uuid_text});
  }
  return devices;
}

}  // namespace minifyd::worker
