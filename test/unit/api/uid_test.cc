// Uid: a canonical UUID is held as 16 bytes and any other uid as its text; either way the text
// reads back exactly, and equality and order are those of the text.
#include "pkg/api/uid.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "pkg/api/decoder.h"
#include "pkg/api/pod.h"

namespace kcm::api {
namespace {

TEST(UidTest, CanonicalUuidRoundTripsAsBytes) {
  const std::string text = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
  Uid uid(text);
  EXPECT_TRUE(uid.IsCanonicalUuid());
  EXPECT_FALSE(uid.empty());
  EXPECT_EQ(uid.str(), text);
  EXPECT_EQ(uid, text);
  EXPECT_EQ(uid, Uid(text));
  EXPECT_NE(uid, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f1");
  std::ostringstream os;
  os << uid;
  EXPECT_EQ(os.str(), text);
  EXPECT_LE(sizeof(Uid), 24u);
}

// The intern table hashes owner references' uids as held: equal uids hold equal bytes.
TEST(UidTest, EqualUidsHoldEqualBytes) {
  const std::string canonical = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";
  EXPECT_EQ(Uid(canonical).HeldBytes(), Uid(canonical).HeldBytes());
  EXPECT_EQ(Uid(canonical).HeldBytes().size(), 16u);
  EXPECT_NE(Uid(canonical).HeldBytes(), Uid("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f1").HeldBytes());
  EXPECT_EQ(Uid("uid-1").HeldBytes(), "uid-1");
  EXPECT_EQ(Uid("uid-1").HeldBytes(), Uid(std::string("uid-1")).HeldBytes());
}

TEST(UidTest, OtherTextIsKeptAsIs) {
  for (const std::string& text : std::vector<std::string>{
           "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0",  // upper case: not what the server generates
           "00000000-0000-0000-0000-000000000000",  // nil UUID (zero bytes would read as empty)
           "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f", "uid-1",
           "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fg", std::string("a\0b", 3)}) {
    Uid uid(text);
    EXPECT_FALSE(uid.IsCanonicalUuid()) << text;
    EXPECT_EQ(uid.str(), text);
    EXPECT_EQ(uid, text);
    Uid copy = uid;
    EXPECT_EQ(copy, uid);
    EXPECT_EQ(copy.str(), text);
  }
  EXPECT_NE(Uid("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0"),
            Uid("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"));
}

TEST(UidTest, EmptyAndAssignment) {
  Uid uid;
  EXPECT_TRUE(uid.empty());
  EXPECT_EQ(uid.str(), "");
  EXPECT_EQ(uid, "");
  EXPECT_EQ(uid, Uid(""));
  uid = "u1";
  EXPECT_EQ(uid, "u1");
  uid = std::string("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
  EXPECT_TRUE(uid.IsCanonicalUuid());
  uid = Uid();
  EXPECT_TRUE(uid.empty());
  EXPECT_NE(Uid("u1"), Uid());
}

// The deletion order ties on uid (ActivePodsWithRanks): the order must be the texts' order,
// whatever form each uid is held in.
TEST(UidTest, OrdersAsTheTextDoes) {
  std::vector<std::string> texts = {"",
                                    "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
                                    "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f1",
                                    "ff1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
                                    "1",
                                    "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0",
                                    "a",
                                    "zz",
                                    "00000000-0000-0000-0000-000000000000",
                                    "9f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"};
  for (const std::string& a : texts) {
    for (const std::string& b : texts) {
      EXPECT_EQ(Uid(a) < Uid(b), a < b) << a << " vs " << b;
      EXPECT_EQ(Uid(a) == Uid(b), a == b) << a << " vs " << b;
    }
  }
}

TEST(UidTest, DecodedFromJsonAndProtobufPods) {
  Decoder decoder;
  auto pod = DecodePod(decoder,
                       R"({"metadata":{"name":"p","uid":"0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}})");
  ASSERT_TRUE(pod.ok()) << pod.error().ToString();
  EXPECT_TRUE((*pod)->metadata.uid.IsCanonicalUuid());
  EXPECT_EQ((*pod)->metadata.uid, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
  auto odd = DecodePod(decoder, R"({"metadata":{"name":"p","uid":"My-Uid"}})");
  ASSERT_TRUE(odd.ok()) << odd.error().ToString();
  EXPECT_EQ((*odd)->metadata.uid, "My-Uid");
  auto none = DecodePod(decoder, R"({"metadata":{"name":"p","uid":null}})");
  ASSERT_TRUE(none.ok()) << none.error().ToString();
  EXPECT_TRUE((*none)->metadata.uid.empty());
}

}  // namespace
}  // namespace kcm::api
