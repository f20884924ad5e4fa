#pragma once
// Included by exactly the two runner mains: with Catch2 v2 it compiles the implementation into
// that translation unit (CATCH_CONFIG_RUNNER); v3 ships it as a library.

#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif
