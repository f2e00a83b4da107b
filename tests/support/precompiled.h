// The headers nearly every test includes, precompiled once for the whole suite (CMakeLists.txt:
// each test reuses racksim_test_support's precompiled header). Parsing GoogleTest and
// nlohmann/json took a second or two of every test file's compile.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>
