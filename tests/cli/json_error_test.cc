// Unit tests of client/json_error: the line and column named for bad JSON input.
#include "client/json_error.h"

#include "gtest/gtest.h"

namespace paraplan::cli {
namespace {

TEST(JsonSyntaxErrorPosition, ValidJsonHasNone) {
  EXPECT_FALSE(JsonSyntaxErrorPosition(R"({"a": [1, -2.5e3, true, null, "x\"\u00e9"], "b": {}})").has_value());
  EXPECT_FALSE(JsonSyntaxErrorPosition("  42\n").has_value());
}

TEST(JsonSyntaxErrorPosition, PointsAtTheFirstBadByte) {
  auto p = JsonSyntaxErrorPosition("{\"name\": \"x\",\n \"gpus_per_node\": }\n");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->line, 2);
  EXPECT_EQ(p->column, 19);  // the '}' where a value belongs
  p = JsonSyntaxErrorPosition("{\"a\": 1,}");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->column, 9);  // trailing comma: a key was expected
  p = JsonSyntaxErrorPosition("{\"a\": 1} extra");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->column, 10);
  p = JsonSyntaxErrorPosition("[1,\n2,\n");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->line, 3);
  EXPECT_TRUE(JsonSyntaxErrorPosition("\"line\nbreak\"").has_value());  // raw newline in a string
  EXPECT_TRUE(JsonSyntaxErrorPosition(std::string(100000, '[')).has_value());  // deep, not a crash
}

TEST(JsonSyntaxErrorPosition, StringsMustBeUtf8) {
  auto p = JsonSyntaxErrorPosition("{\"name\": \"caf\xe9\"}");  // Latin-1, not UTF-8
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->column, 15);  // the quote where 0xE9 needed two continuation bytes
  EXPECT_TRUE(JsonSyntaxErrorPosition(R"({"name": "\ud800"})").has_value());  // a lone surrogate
  EXPECT_FALSE(JsonSyntaxErrorPosition("{\"name\": \"caf\xc3\xa9 \\ud83d\\ude00\"}").has_value());
}

TEST(DescribeJsonError, SyntaxErrorNamesFileLineAndColumn) {
  EXPECT_EQ(DescribeJsonError("p.json", 1, "{\n  \"a\": }", "SystemProfile", "Unexpected token.\n}\n^"),
            "p.json:2:8: not valid JSON: Unexpected token.");
}

TEST(DescribeJsonError, FieldErrorNamesTheLineOfTheKey) {
  const char* text = "{\"name\": \"x\",\n \"accelerator\": {\n  \"bogus\": 1}}";
  EXPECT_EQ(DescribeJsonError("p.json", 1, text, "SystemProfile", "(accelerator) bogus: Cannot find field."),
            "p.json:3: not a valid SystemProfile: (accelerator) bogus: Cannot find field.");
  // A camelCase key is found for the snake_case field the parser names.
  EXPECT_EQ(DescribeJsonError("p.json", 1, "{\n\"gpusPerNode\": \"x\"}", "SystemProfile",
                              "(gpus_per_node): invalid value \"x\" for type TYPE_INT32"),
            "p.json:2: not a valid SystemProfile: (gpus_per_node): invalid value \"x\" for type TYPE_INT32");
}

TEST(DescribeJsonError, LinesOfAJsonLinesFileCountFromTheirOwnLine) {
  EXPECT_EQ(DescribeJsonError("b.jsonl", 7, "{\"profile\": 3}", "EstimateRequest", "(profile): invalid value 3"),
            "b.jsonl:7: not a valid EstimateRequest: (profile): invalid value 3");
  EXPECT_EQ(DescribeJsonError("b.jsonl", 7, "{oops", "EstimateRequest", "Expected : between key:value pair."),
            "b.jsonl:7:2: not valid JSON: Expected : between key:value pair.");
  EXPECT_EQ(DescribeJsonError("e.json", 1, "  \n", "Workload", "Unexpected end of string."),
            "e.json:1: not a valid Workload: empty input");
}

}  // namespace
}  // namespace paraplan::cli
