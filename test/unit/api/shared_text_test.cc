#include "pkg/api/shared_text.h"

#include <gtest/gtest.h>
// next_in as a pointer to const, as in shared_text.cc.
#define ZLIB_CONST
#include <zlib.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

namespace kcm::api {
namespace {

// A ReplicaSet-like document; `i` changes its names, uid and counts as between the ReplicaSets of
// one namespace.
std::string Doc(int i) {
  const std::string n = std::to_string(i);
  return R"({"metadata":{"name":"web-)" + n +
         R"(-7d9f8b6c5d","namespace":"prod","uid":"8a7b6c5d-4e3f-2a1b-0c9d-)" +
         std::string(12 - n.size(), '0') + n + R"(","resourceVersion":")" +
         std::to_string(1000 + i) + R"(","labels":{"app":"web-)" + n +
         R"(","pod-template-hash":"7d9f8b6c5d"},"annotations":{"deployment.kubernetes.io/revision":"1"}},)"
         R"("spec":{"replicas":)" +
         n + R"(,"selector":{"matchLabels":{"app":"web-)" + n +
         R"("}},"template":{"metadata":{"labels":{"app":"web-)" + n +
         R"("}},"spec":{"containers":[{"name":"c","image":"registry.example/app:1.0","resources":{},)"
         R"("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",)"
         R"("imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","dnsPolicy":"ClusterFirst"}}},)"
         R"("status":{"replicas":)" +
         n + R"(,"observedGeneration":1}})";
}

TEST(SharedTextTest, PlainTextReadsBackAndSubSharesTheBuffer) {
  SharedText empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.str(), "");
  EXPECT_EQ(empty, "");
  EXPECT_FALSE(empty.SharesBufferWith(SharedText()));

  SharedText whole = SharedText::Concat("hello, ", "world");
  EXPECT_EQ(whole.size(), 12u);
  EXPECT_EQ(whole, "hello, world");
  EXPECT_FALSE(whole.packed());
  EXPECT_EQ(whole.stored_size(), 12u);
  SharedText sub = SharedText::Sub(whole, 7, 5);
  EXPECT_EQ(sub, "world");
  EXPECT_TRUE(sub.SharesBufferWith(whole));
  EXPECT_EQ(SharedText::Sub(sub, 1, 3), "orl");
  EXPECT_TRUE(SharedText::Sub(whole, 3, 0).empty());
  EXPECT_THROW(SharedText::Sub(whole, 8, 5), std::out_of_range);

  // Copies, moves and assignments keep the text; the buffer lives while any value does.
  SharedText copy = sub;
  whole = SharedText();
  sub = "other";
  EXPECT_EQ(copy, "world");
  SharedText moved = std::move(copy);
  EXPECT_EQ(moved, "world");
  moved = moved;  // self-assignment keeps the value
  EXPECT_EQ(moved, "world");
  std::string appended = ">";
  moved.AppendTo(&appended);
  EXPECT_EQ(appended, ">world");
}

// The first text of a kind becomes the dictionary and stays plain; later texts of that kind are
// held deflated against it, at a fraction of their size, and read back byte for byte — whole,
// as any sub-range, and after the packer is gone.
TEST(SharedTextTest, PackedTextsReadBackExactly) {
  std::vector<SharedText> texts;
  {
    TextPacker packer;
    for (int i = 0; i < 50; ++i) {
      const std::string doc = Doc(i);
      const size_t cut = doc.find(R"("spec")");
      texts.push_back(packer.Pack("ReplicaSet", doc.substr(0, cut), doc.substr(cut)));
    }
  }
  EXPECT_FALSE(texts[0].packed());
  for (int i = 0; i < 50; ++i) {
    const std::string doc = Doc(i);
    ASSERT_EQ(texts[i], doc) << i;
    EXPECT_EQ(texts[i].str(), doc);
    if (i == 0) continue;
    EXPECT_TRUE(texts[i].packed()) << i;
    // Similar documents pack to well under a quarter of their size.
    EXPECT_LT(texts[i].stored_size() * 4, doc.size()) << i << ": " << texts[i].stored_size();
    // The template's range, as DecodePodTemplate takes it, and the text's first and last bytes.
    const size_t t = doc.find(R"({"metadata":{"labels")", 10);
    const size_t t_end = doc.find(R"(,"status")");
    ASSERT_NE(t, std::string::npos);
    SharedText tmpl = SharedText::Sub(texts[i], t, t_end - 1 - t);
    EXPECT_TRUE(tmpl.packed());
    EXPECT_TRUE(tmpl.SharesBufferWith(texts[i]));
    EXPECT_EQ(tmpl.str(), doc.substr(t, t_end - 1 - t));
    EXPECT_EQ(SharedText::Sub(texts[i], 0, 1), "{");
    EXPECT_EQ(SharedText::Sub(texts[i], doc.size() - 2, 2), "}}");
  }
  // Equality across representations: packed against plain and against another packed value.
  EXPECT_EQ(texts[3], SharedText(Doc(3)));
  EXPECT_EQ(SharedText(Doc(3)), texts[3]);
  EXPECT_FALSE(texts[3] == texts[4]);
  EXPECT_FALSE(texts[3] == SharedText(Doc(4)));
}

TEST(SharedTextTest, KindsHaveTheirOwnDictionaries) {
  TextPacker packer;
  const std::string doc = Doc(1);
  EXPECT_FALSE(packer.Pack("ReplicaSet", doc, "").packed());
  EXPECT_FALSE(packer.Pack("Deployment", Doc(2), "").packed());
  SharedText rs = packer.Pack("ReplicaSet", Doc(3), "");
  SharedText d = packer.Pack("Deployment", Doc(4), "");
  EXPECT_TRUE(rs.packed());
  EXPECT_TRUE(d.packed());
  EXPECT_EQ(rs, Doc(3));
  EXPECT_EQ(d, Doc(4));
}

// The size of `text` deflated the way TextPacker documents it (raw deflate, 4 KiB window, level
// 6, memory level 4) by a stream made for it alone and loaded with `dict`.
size_t FreshDeflateSize(const std::string& dict, const std::string& text) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, -12, 4, Z_DEFAULT_STRATEGY), Z_OK);
  EXPECT_EQ(deflateSetDictionary(&zs, reinterpret_cast<const Bytef*>(dict.data()),
                                 static_cast<uInt>(dict.size())),
            Z_OK);
  std::string out(deflateBound(&zs, text.size()), '\0');
  zs.next_in = reinterpret_cast<const Bytef*>(text.data());
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  const size_t n = out.size() - zs.avail_out;
  deflateEnd(&zs);
  return n;
}

// Each text is packed from its kind's dictionary alone, whatever the packer packed before (the
// packer copies a stream that loaded the dictionary once): the stream is the one a fresh deflate
// loaded with that dictionary writes, and it reads back anywhere.
TEST(SharedTextTest, EachPackIsAFreshStreamFromTheDictionary) {
  TextPacker packer;
  const std::string rs_dict = Doc(0);
  const std::string d_dict = Doc(500);
  packer.Pack("ReplicaSet", rs_dict, "");
  packer.Pack("Deployment", d_dict, "");
  std::vector<SharedText> kept;
  for (int i = 1; i <= 40; ++i) {
    const std::string doc = Doc(i);
    SharedText rs = packer.Pack("ReplicaSet", doc, "");
    SharedText d = packer.Pack("Deployment", doc, "");
    ASSERT_TRUE(rs.packed());
    ASSERT_TRUE(d.packed());
    EXPECT_EQ(rs.stored_size(), FreshDeflateSize(rs_dict, doc)) << i;
    EXPECT_EQ(d.stored_size(), FreshDeflateSize(d_dict, doc)) << i;
    // The same text again packs to the same size: nothing of the last stream carried over.
    EXPECT_EQ(packer.Pack("ReplicaSet", doc, "").stored_size(), rs.stored_size()) << i;
    kept.push_back(rs);
    kept.push_back(d);
  }
  for (int i = 1; i <= 40; ++i) {
    EXPECT_EQ(kept[2 * (i - 1)], Doc(i));
    EXPECT_EQ(kept[2 * (i - 1) + 1], Doc(i));
  }
}

TEST(SharedTextTest, WhatDoesNotPayStaysPlain) {
  TextPacker packer;
  // Too short to pack; and not taken as the dictionary either.
  SharedText small = packer.Pack("ReplicaSet", R"({"a":)", "1}");
  EXPECT_FALSE(small.packed());
  EXPECT_EQ(small, R"({"a":1})");
  // Bytes that do not compress are kept as they are.
  std::mt19937 rng(7);
  std::string noise(600, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  EXPECT_FALSE(packer.Pack("ReplicaSet", noise, "").packed());  // the dictionary
  std::string other_noise(600, '\0');
  for (char& c : other_noise) c = static_cast<char>(rng());
  SharedText kept = packer.Pack("ReplicaSet", other_noise, "");
  EXPECT_FALSE(kept.packed());
  EXPECT_EQ(kept, other_noise);
}

// A text too large to be a dictionary is packed without one when its kind has none yet; the
// next one that fits becomes the dictionary.
TEST(SharedTextTest, LargeTextsPackWithoutADictionary) {
  TextPacker packer;
  std::string big;
  for (int i = 0; big.size() <= TextPacker::kMaxDictionary; ++i) big += Doc(i);
  SharedText first = packer.Pack("Deployment", big, "");
  EXPECT_TRUE(first.packed());
  EXPECT_LT(first.stored_size(), big.size());
  EXPECT_EQ(first, big);
  EXPECT_FALSE(packer.Pack("Deployment", Doc(1), "").packed());  // now the dictionary
  SharedText next = packer.Pack("Deployment", Doc(2), "");
  EXPECT_TRUE(next.packed());
  EXPECT_EQ(next, Doc(2));
  // A text far larger than the window (its scratch is not kept) reads back, and so does the next.
  std::string huge;
  for (int i = 0; huge.size() < 100000; ++i) huge += Doc(i);
  SharedText packed_huge = packer.Pack("Deployment", huge, "");
  EXPECT_TRUE(packed_huge.packed());
  EXPECT_EQ(packed_huge, huge);
  EXPECT_EQ(packer.Pack("Deployment", Doc(3), ""), Doc(3));
  // Pieces split anywhere, one of them empty, give the same text.
  const std::string doc = Doc(5);
  for (size_t cut : {size_t{0}, size_t{1}, doc.size() / 2, doc.size()}) {
    EXPECT_EQ(packer.Pack("Deployment", doc.substr(0, cut), doc.substr(cut)), doc) << cut;
  }
}

// Copies of one packed value are made, read and dropped on several threads at once (the cached
// objects are read by every worker); the buffer's count is atomic. Run under TSan in CI.
TEST(SharedTextTest, ValuesAreReadAndCopiedFromManyThreads) {
  TextPacker packer;
  packer.Pack("ReplicaSet", Doc(0), "");
  const SharedText text = packer.Pack("ReplicaSet", Doc(1), "");
  ASSERT_TRUE(text.packed());
  const std::string want = Doc(1);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        SharedText copy = text;
        SharedText sub = SharedText::Sub(copy, 2, 10);
        if (copy.str() != want || sub.str() != want.substr(2, 10)) ++mismatches[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

}  // namespace
}  // namespace kcm::api
