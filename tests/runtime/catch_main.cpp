// Catch2's main, compiled once on its own (the single header is slow to compile).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
