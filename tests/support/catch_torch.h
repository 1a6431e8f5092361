// Catch2 for test files that include LibTorch: Debian's LibTorch pulls in glog, whose CHECK macro
// collides with Catch's. Include this after every LibTorch header.
#pragma once

#ifdef CHECK
#undef CHECK
#endif
#include <catch2/catch.hpp>
