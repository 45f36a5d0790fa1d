// Interned labels and owner references: pods decoded through one table share one immutable set
// per distinct content, the set goes when its last pod goes, Labels reads like the std::map it
// replaced, and decoders on several threads may share a table while other threads read (run
// under TSan by the sanitizer build).
#include "pkg/api/intern_table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pkg/api/codec.h"
#include "pkg/api/label_selector.h"
#include "pkg/api/labels.h"
#include "pkg/api/pod.h"
#include "pkg/api/protobuf.h"
#include "test/unit/api/testdata.h"

namespace kcm::api {
namespace {

// A pod of ReplicaSet `rs` with the given labels object text.
std::string PodJson(const std::string& name, const std::string& labels, const std::string& rs) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":"u-)" + name +
         R"(","labels":)" + labels +
         R"(,"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":")" + rs +
         R"(","uid":"uid-)" + rs + R"(","controller":true,"blockOwnerDeletion":true}]}})";
}

std::shared_ptr<const Pod> Decode(Decoder& d, const std::string& json) {
  auto p = DecodePod(d, json);
  EXPECT_TRUE(p.ok()) << p.error().ToString();
  return p.ok() ? *p : nullptr;
}

TEST(InternTableTest, PodsOfOneReplicaSetShareLabelsAndOwnerReferences) {
  Decoder d;
  auto a = Decode(d, PodJson("a", R"({"app":"web","pod-template-hash":"h1"})", "rs-1"));
  // Same content in another key order: the same set.
  auto b = Decode(d, PodJson("b", R"({"pod-template-hash":"h1","app":"web"})", "rs-1"));
  auto c = Decode(d, PodJson("c", R"({"app":"web","pod-template-hash":"h2"})", "rs-2"));
  ASSERT_TRUE(a && b && c);
  EXPECT_TRUE(a->metadata.labels.SharesStorageWith(b->metadata.labels));
  EXPECT_TRUE(a->metadata.owner_references.SharesStorageWith(b->metadata.owner_references));
  EXPECT_FALSE(a->metadata.labels.SharesStorageWith(c->metadata.labels));
  EXPECT_FALSE(a->metadata.owner_references.SharesStorageWith(c->metadata.owner_references));
  EXPECT_EQ(a->metadata.labels, b->metadata.labels);
  EXPECT_NE(a->metadata.labels, c->metadata.labels);
  EXPECT_EQ(a->metadata.labels.at("pod-template-hash"), "h1");
  ASSERT_NE(a->metadata.ControllerRef(), nullptr);
  EXPECT_EQ(a->metadata.ControllerRef()->name, "rs-1");
  EXPECT_EQ(c->metadata.ControllerRef()->uid, "uid-rs-2");
  auto slots = d.interner().SlotCount();
  EXPECT_EQ(slots.labels, 2u);
  EXPECT_EQ(slots.owner_references, 2u);
}

TEST(InternTableTest, JsonAndProtobufDecodesShareOneSet) {
  Decoder d;
  auto json = DecodePod(d, testing::ApiTestdata("pod-protobuf.json"));
  auto pb = DecodePodProtobuf(d, testing::ApiTestdata("pod-protobuf.pb"));
  ASSERT_TRUE(json.ok() && pb.ok());
  EXPECT_TRUE((*json)->metadata.labels.SharesStorageWith((*pb)->metadata.labels));
  EXPECT_TRUE(
      (*json)->metadata.owner_references.SharesStorageWith((*pb)->metadata.owner_references));
}

TEST(InternTableTest, ASetIsReleasedWhenItsLastPodGoes) {
  Decoder d;
  auto a = Decode(d, PodJson("a", R"({"app":"web"})", "rs-1"));
  auto b = Decode(d, PodJson("b", R"({"app":"web"})", "rs-1"));
  ASSERT_TRUE(a && b);
  a.reset();
  d.interner().Sweep();
  EXPECT_EQ(d.interner().SlotCount().labels, 1u) << "b still refers to the set";
  EXPECT_EQ(b->metadata.labels.at("app"), "web");
  b.reset();
  d.interner().Sweep();
  EXPECT_EQ(d.interner().SlotCount().labels, 0u);
  EXPECT_EQ(d.interner().SlotCount().owner_references, 0u);
  // A later pod with the same content gets a fresh set that reads the same.
  auto c = Decode(d, PodJson("c", R"({"app":"web"})", "rs-1"));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->metadata.labels, (Labels{{"app", "web"}}));
}

TEST(InternTableTest, DeadSlotsAreSweptWithoutAnExplicitSweep) {
  // Churn through many distinct sets, keeping only the last few alive: the table must stay
  // within twice the live sets (plus a small floor), not grow with every set ever seen.
  InternTable table;
  std::vector<Labels> alive;
  for (int i = 0; i < 5000; ++i) {
    std::string v = std::to_string(i);
    std::vector<Labels::value_type> items{{"app", "web"}, {"hash", v}};
    alive.push_back(table.InternLabels(&items));
    if (alive.size() > 10) alive.erase(alive.begin());
  }
  EXPECT_LE(table.SlotCount().labels, 2 * 10 + 64u);
  EXPECT_EQ(alive.back().at("hash"), "4999");
}

// Annotations (ReplicaSets' and Deployments') intern like labels: one map per distinct content,
// in any key order, the last of repeated keys winning (as a JSON object read into a std::map);
// the table holds them itself and drops a map once only it still holds it.
TEST(InternTableTest, EqualAnnotationsShareOneMapUntilTheLastHolderGoes) {
  InternTable table;
  std::vector<Labels::value_type> items{{"rev", "1"}, {"desired", "10"}};
  Annotations a = table.InternAnnotations(&items);
  items = {{"desired", "10"}, {"rev", "0"}, {"rev", "1"}};
  Annotations b = table.InternAnnotations(&items);
  items = {{"desired", "10"}, {"rev", "2"}};
  Annotations c = table.InternAnnotations(&items);
  EXPECT_TRUE(a.SharesStorageWith(b));
  EXPECT_FALSE(a.SharesStorageWith(c));
  EXPECT_EQ(a.map(), (Annotations::Map{{"desired", "10"}, {"rev", "1"}}));
  EXPECT_EQ(c.at("rev"), "2");
  items.clear();
  EXPECT_TRUE(table.InternAnnotations(&items).empty());
  EXPECT_EQ(table.SlotCount().annotations, 2u);
  c = Annotations();
  table.Sweep();
  EXPECT_EQ(table.SlotCount().annotations, 1u);
  a = Annotations();
  table.Sweep();
  EXPECT_EQ(table.SlotCount().annotations, 1u) << "b still holds the map";
  EXPECT_EQ(b.at("desired"), "10");
  b = Annotations();
  table.Sweep();
  EXPECT_EQ(table.SlotCount().annotations, 0u);
}

TEST(LabelsTest, ReadsLikeASortedMap) {
  // Repeated keys: the last wins (as a JSON object or protobuf map decoded into a std::map).
  Labels l = Labels::Make({{"tier", "x"}, {"app", "web"}, {"tier", "frontend"}, {"a/b", ""}});
  EXPECT_EQ(l.size(), 3u);
  EXPECT_FALSE(l.empty());
  std::vector<std::string> keys;
  for (const auto& [k, v] : l) keys.emplace_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"a/b", "app", "tier"}));
  EXPECT_EQ(l.at("tier"), "frontend");
  EXPECT_EQ(l.at("a/b"), "");
  EXPECT_EQ(l.count("app"), 1u);
  EXPECT_EQ(l.count("ap"), 0u);
  EXPECT_TRUE(l.contains("app"));
  EXPECT_EQ(l.find("zzz"), l.end());
  EXPECT_EQ(l.find("app")->second, "web");
  EXPECT_THROW((void)l.at("missing"), std::out_of_range);
  EXPECT_EQ(l.ToMap(), (std::map<std::string, std::string>{
                           {"a/b", ""}, {"app", "web"}, {"tier", "frontend"}}));
  // Built from a std::map, from a list, interned: all equal when the content is.
  InternTable table;
  std::vector<Labels::value_type> items{{"app", "web"}, {"tier", "frontend"}, {"a/b", ""}};
  Labels interned = table.InternLabels(&items);
  EXPECT_EQ(l, interned);
  EXPECT_EQ(Labels(l.ToMap()), l);
  EXPECT_NE(l, (Labels{{"app", "web"}}));
  Labels empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.begin(), empty.end());
  EXPECT_EQ(empty.find("app"), empty.end());
  EXPECT_EQ(empty, Labels::Make({}));
  EXPECT_EQ(empty, Labels(std::map<std::string, std::string>{}));
}

// One flat block per set: every key found by the binary search for sets of 1 to 40 labels, empty
// keys and values kept apart from their neighbours, copies share the block and outlive the
// original, and the iterator is random access (std algorithms over it).
TEST(LabelsTest, FlatSetFindsEveryKeyAndCopiesShareIt) {
  static_assert(sizeof(Labels) == 8);
  static_assert(std::random_access_iterator<Labels::const_iterator>);
  for (int n = 1; n <= 40; ++n) {
    std::map<std::string, std::string> map;
    for (int i = 0; i < n; ++i) map["k" + std::to_string(i * 7)] = std::string(i % 3, 'v');
    Labels l(map);
    ASSERT_EQ(l.size(), static_cast<size_t>(n));
    for (const auto& [k, v] : map) {
      ASSERT_TRUE(l.contains(k)) << n << " " << k;
      EXPECT_EQ(l.at(k), v);
    }
    EXPECT_FALSE(l.contains("k1"));
    EXPECT_FALSE(l.contains(""));
    EXPECT_FALSE(l.contains("z"));
    EXPECT_EQ(l.ToMap(), map);
    EXPECT_EQ(l.end() - l.begin(), n);
    EXPECT_EQ(std::prev(l.end())->first, map.rbegin()->first);
    EXPECT_EQ(l.begin()[n - 1].first, map.rbegin()->first);
  }
  Labels edge = Labels::Make({{"", "empty-key"}, {"a", ""}, {"b", "x"}, {"c", ""}});
  EXPECT_EQ(edge.at(""), "empty-key");
  EXPECT_EQ(edge.at("a"), "");
  EXPECT_EQ(edge.at("b"), "x");
  EXPECT_EQ(edge.at("c"), "");
  Labels copy;
  {
    Labels original = Labels::Make({{"app", "web"}});
    copy = original;
    EXPECT_TRUE(copy.SharesStorageWith(original));
    Labels moved = std::move(original);
    EXPECT_TRUE(moved.SharesStorageWith(copy));
    EXPECT_TRUE(original.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  }
  EXPECT_EQ(copy.at("app"), "web");
  copy = copy;  // self-assignment keeps the set
  EXPECT_EQ(copy.at("app"), "web");
}

TEST(LabelsTest, SelectorsMatchInternedLabels) {
  Decoder d;
  auto pod = Decode(d, PodJson("a", R"({"app":"web","tier":"frontend"})", "rs-1"));
  ASSERT_TRUE(pod);
  const Labels& labels = pod->metadata.labels;
  EXPECT_TRUE(labels::Selector::FromSet({{"app", "web"}}).Matches(labels));
  EXPECT_FALSE(labels::Selector::FromSet({{"app", "db"}}).Matches(labels));
  LabelSelector sel;
  sel.match_expressions = {{"tier", "In", {"backend", "frontend"}}, {"gone", "DoesNotExist", {}}};
  auto s = LabelSelectorAsSelector(&sel);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->Matches(labels));
  sel.match_expressions = {{"tier", "NotIn", {"frontend"}}};
  s = LabelSelectorAsSelector(&sel);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->Matches(labels));
  EXPECT_FALSE(labels::Selector::Nothing().Matches(labels));
  EXPECT_TRUE(labels::Selector::Everything().Matches(labels));
}

TEST(OwnerReferencesTest, ReadsLikeAVector) {
  OwnerReferences refs = {{"apps/v1", "ReplicaSet", "rs", "u1", false, false},
                          {"apps/v1", "ReplicaSet", "rs2", "u2", true, true}};
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_EQ(refs[1].name, "rs2");
  EXPECT_EQ(refs.front().uid, "u1");
  ObjectMeta meta;
  EXPECT_EQ(meta.ControllerRef(), nullptr);
  meta.owner_references = refs;
  ASSERT_NE(meta.ControllerRef(), nullptr);
  EXPECT_EQ(meta.ControllerRef()->uid, "u2");
  EXPECT_EQ(refs, OwnerReferences(refs.ToVector()));
  EXPECT_NE(refs, OwnerReferences{});
}

// Decoders on several threads share one table (as a lister-watcher's LIST and WATCH decoders
// do) while readers on other threads match and drop the pods they publish. Meaningful under TSan.
TEST(InternTableTest, ConcurrentDecodeAndRead) {
  auto table = std::make_shared<InternTable>();
  std::mutex mu;
  std::vector<std::shared_ptr<const Pod>> store;  // guarded by mu
  std::atomic<bool> done{false};
  std::atomic<int> decoded{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      Decoder d(table);
      for (int i = 0; i < 2000; ++i) {
        const std::string rs = "rs-" + std::to_string(i % 7);
        auto p = DecodePod(d, PodJson("p" + std::to_string(w) + "-" + std::to_string(i),
                                      R"({"app":"web","hash":")" + rs + R"("})", rs));
        if (!p.ok()) continue;
        ++decoded;
        std::lock_guard lock(mu);
        store.push_back(*p);
        if (store.size() > 50) store.erase(store.begin());
      }
    });
  }
  std::atomic<int> matched{0};
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&] {
      const auto sel = labels::Selector::FromSet({{"app", "web"}});
      // At least one read after the decoders are done: on a loaded machine a reader may first
      // run only then, and the store still holds the last 50 pods.
      bool last = false;
      while (!last) {
        last = done.load();
        std::shared_ptr<const Pod> pod;
        {
          std::lock_guard lock(mu);
          if (!store.empty()) pod = store.back();
        }
        if (pod && sel.Matches(pod->metadata.labels) &&
            pod->metadata.ControllerRef()->name == pod->metadata.labels.at("hash")) {
          ++matched;
        }
      }
    });
  }
  threads[0].join();
  threads[1].join();
  done = true;
  for (size_t i = 2; i < threads.size(); ++i) threads[i].join();
  EXPECT_EQ(decoded.load(), 4000);
  EXPECT_GT(matched.load(), 0);
  store.clear();
  table->Sweep();
  EXPECT_EQ(table->SlotCount().labels, 0u);
  EXPECT_EQ(table->SlotCount().owner_references, 0u);
}

}  // namespace
}  // namespace kcm::api
