// The calibration report's JSON layout: one row per line, and nothing lost in the layout.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "app/studies/calibrate_json.h"

namespace racksim::app {
namespace {

using Json = nlohmann::ordered_json;

const char* const kDocument = R"({
  "written_by": "racksim calibrate",
  "points": 2,
  "overrides": ["layout.tp=2", "layout.pp=1"],
  "empty": [],
  "nothing": {},
  "errors": {"in_sample": {"mean_abs_relative": 0.0617, "points": 41}},
  "rows": [{"line": 3, "error": -0.25, "overrides": ["a=1"]}, {"line": 4, "error": 1e-05}],
  "nested": [[1, 2], {"x": 1}]
})";

TEST(JsonLayout, OneRowPerLineScalarsOnOneLine) {
  EXPECT_EQ(json_text_one_entry_per_line(Json::parse(kDocument)),
            "{\n"
            "  \"written_by\": \"racksim calibrate\",\n"
            "  \"points\": 2,\n"
            "  \"overrides\": [\"layout.tp=2\",\"layout.pp=1\"],\n"
            "  \"empty\": [],\n"
            "  \"nothing\": {},\n"
            "  \"errors\": {\n"
            "    \"in_sample\": {\n"
            "      \"mean_abs_relative\": 0.0617,\n"
            "      \"points\": 41\n"
            "    }\n"
            "  },\n"
            "  \"rows\": [\n"
            "    {\"line\":3,\"error\":-0.25,\"overrides\":[\"a=1\"]},\n"
            "    {\"line\":4,\"error\":1e-05}\n"
            "  ],\n"
            "  \"nested\": [\n"
            "    [1,2],\n"
            "    {\n"
            "      \"x\": 1\n"
            "    }\n"
            "  ]\n"
            "}\n");
}

TEST(JsonLayout, ReadsBackAsTheSameDocument) {
  const Json document = Json::parse(kDocument);
  const std::string text = json_text_one_entry_per_line(document);
  EXPECT_EQ(Json::parse(text), document);
  EXPECT_EQ(json_text_one_entry_per_line(Json::parse(text)), text);
}

}  // namespace
}  // namespace racksim::app
