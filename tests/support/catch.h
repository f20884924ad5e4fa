#pragma once
// Catch2 for both the Debian 12 package (v2, single header) and v3 (Ubuntu 24.04, docker images).

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif
