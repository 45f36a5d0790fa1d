#include "pkg/api/labels.h"

#include <gtest/gtest.h>

#include "pkg/api/label_selector.h"

namespace kcm::api {
namespace {

// Matches `labels` as a std::map (labels::Set, what templates and selectors carry) and as the
// interned api::Labels of a decoded object; the two must always agree.
bool MatchesBoth(const labels::Selector& sel, const labels::Set& labels) {
  bool as_set = sel.Matches(labels);
  bool as_labels = sel.Matches(Labels(labels));
  EXPECT_EQ(as_set, as_labels) << sel.String();
  return as_set;
}

TEST(LabelSelectorTest, NullMatchesNothingEmptyMatchesEverything) {
  auto nothing = LabelSelectorAsSelector(nullptr);
  ASSERT_TRUE(nothing.ok());
  EXPECT_TRUE(nothing->IsNothing());
  EXPECT_FALSE(MatchesBoth(*nothing, {}));
  EXPECT_FALSE(MatchesBoth(*nothing, {{"a", "b"}}));
  LabelSelector empty;
  auto everything = LabelSelectorAsSelector(&empty);
  ASSERT_TRUE(everything.ok());
  EXPECT_TRUE(everything->Empty());
  EXPECT_TRUE(MatchesBoth(*everything, {}));
  EXPECT_TRUE(MatchesBoth(*everything, {{"a", "b"}}));
  EXPECT_EQ(everything->String(), "");
}

TEST(LabelSelectorTest, MatchLabelsAndExpressions) {
  LabelSelector sel;
  sel.match_labels = {{"a", "b"}};
  sel.match_expressions = {{"c", "In", {"y", "x"}},
                           {"d", "DoesNotExist", {}},
                           {"e", "Exists", {}},
                           {"f", "NotIn", {"z"}}};
  auto s = LabelSelectorAsSelector(&sel);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(s->String(), "a=b,c in (x,y),!d,e,f notin (z)");
  EXPECT_TRUE(MatchesBoth(*s, {{"a", "b"}, {"c", "x"}, {"e", ""}}));
  EXPECT_TRUE(MatchesBoth(*s, {{"a", "b"}, {"c", "y"}, {"e", "1"}, {"f", "q"}}));
  EXPECT_FALSE(MatchesBoth(*s, {{"a", "b"}, {"c", "x"}, {"e", ""}, {"f", "z"}}));  // NotIn
  EXPECT_FALSE(MatchesBoth(*s, {{"a", "b"}, {"c", "x"}, {"e", ""}, {"d", ""}}));   // DoesNotExist
  EXPECT_FALSE(MatchesBoth(*s, {{"a", "b"}, {"c", "w"}, {"e", ""}}));              // In
  EXPECT_FALSE(MatchesBoth(*s, {{"a", "b"}, {"c", "x"}}));                         // Exists
  EXPECT_FALSE(MatchesBoth(*s, {{"a", "c"}, {"c", "x"}, {"e", ""}}));              // matchLabels
}

TEST(LabelSelectorTest, OperatorRulesAreValidated) {
  auto check_invalid = [](LabelSelectorRequirement r) {
    LabelSelector sel;
    sel.match_expressions = {std::move(r)};
    auto s = LabelSelectorAsSelector(&sel);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().reason, "InvalidArgument");
  };
  check_invalid({"a", "In", {}});
  check_invalid({"a", "NotIn", {}});
  check_invalid({"a", "Exists", {"x"}});
  check_invalid({"a", "DoesNotExist", {"x"}});
  check_invalid({"a", "Equals", {"x"}});
  check_invalid({"-bad-", "Exists", {}});
  check_invalid({"a", "In", {"bad value"}});
  LabelSelector bad_match;
  bad_match.match_labels = {{"a", "x y"}};
  EXPECT_FALSE(LabelSelectorAsSelector(&bad_match).ok());
}

TEST(LabelSelectorTest, KeySyntax) {
  EXPECT_TRUE(labels::IsQualifiedName("app"));
  EXPECT_TRUE(labels::IsQualifiedName("app.kubernetes.io/name"));
  EXPECT_FALSE(labels::IsQualifiedName("App.Example/x"));
  EXPECT_FALSE(labels::IsQualifiedName("/x"));
  EXPECT_FALSE(labels::IsQualifiedName(std::string(64, 'a')));
  EXPECT_TRUE(labels::IsValidLabelValue(""));
  EXPECT_FALSE(labels::IsValidLabelValue("-a"));
}

TEST(LabelSelectorTest, FromJsonAndBack) {
  auto v = json::Parse(
      R"({"matchLabels":{"app":"web"},"matchExpressions":[{"key":"t","operator":"In","values":["a"]}]})");
  auto sel = LabelSelectorFromJson(*v);
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->match_labels.at("app"), "web");
  EXPECT_TRUE(json::SemanticEqual(sel->ToJson(), *v));
  auto bad = LabelSelectorFromJson(*json::Parse(R"({"matchLabels":{"app":1}})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("selector.matchLabels.app"), std::string::npos);
}

TEST(LabelSelectorTest, SelectorFromSet) {
  auto s = labels::Selector::FromSet({{"b", "2"}, {"a", "1"}});
  EXPECT_EQ(s.String(), "a=1,b=2");
  EXPECT_TRUE(MatchesBoth(s, {{"a", "1"}, {"b", "2"}, {"c", "3"}}));
}

}  // namespace
}  // namespace kcm::api
