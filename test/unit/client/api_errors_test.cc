#include "pkg/client/api_errors.h"

#include <gtest/gtest.h>

namespace kcm::client {
namespace {

// 1.7 a Status body: code, reason, message and details.causes.
TEST(ApiErrorsTest, DecodesStatusBody) {
  const std::string body = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
    "message":"Timeout: Too large resource version: 12, current: 10","reason":"Timeout",
    "details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],
    "retryAfterSeconds":1},"code":504})";
  Error e = DecodeApiError(504, body);
  EXPECT_EQ(e.code, 504);
  EXPECT_EQ(e.reason, "Timeout");
  EXPECT_EQ(e.message, "Timeout: Too large resource version: 12, current: 10");
  ASSERT_EQ(e.causes.size(), 1u);
  EXPECT_TRUE(errors::IsTooLargeResourceVersion(e));
  EXPECT_TRUE(errors::IsTimeout(e));
  EXPECT_FALSE(errors::IsNotFound(e));
}

// 1.7 a body that is not a Status: reason synthesized from the HTTP code.
TEST(ApiErrorsTest, SynthesizesReasonFromCode) {
  struct Case {
    int code;
    std::string_view reason;
    bool (*is)(const Error&);
  };
  const Case cases[] = {
      {404, errors::reason::kNotFound, errors::IsNotFound},
      {409, errors::reason::kConflict, errors::IsConflict},
      {410, errors::reason::kExpired, errors::IsResourceExpired},
      {403, errors::reason::kForbidden, errors::IsForbidden},
      {401, errors::reason::kUnauthorized, errors::IsUnauthorized},
      {429, errors::reason::kTooManyRequests, errors::IsTooManyRequests},
      {500, errors::reason::kInternalError, errors::IsInternalError},
      {504, errors::reason::kTimeout, errors::IsTimeout},
      {422, errors::reason::kInvalid, errors::IsInvalid},
  };
  for (const auto& c : cases) {
    Error e = DecodeApiError(c.code, "<html>proxy says no</html>");
    EXPECT_EQ(e.code, c.code);
    EXPECT_EQ(e.reason, c.reason) << c.code;
    EXPECT_TRUE(c.is(e)) << c.code;
    EXPECT_NE(e.message.find("proxy says no"), std::string::npos);
  }
}

// 1.7 helpers: AlreadyExists, Gone vs Expired, NamespaceTerminating cause, unknown reason falls
// back to the code.
TEST(ApiErrorsTest, Helpers) {
  Error exists = DecodeApiError(
      409, R"({"kind":"Status","reason":"AlreadyExists","message":"x exists","code":409})");
  EXPECT_TRUE(errors::IsAlreadyExists(exists));
  EXPECT_FALSE(errors::IsConflict(exists));  // a known reason wins over the code

  Error gone = DecodeApiError(410, R"({"kind":"Status","reason":"Gone","code":410})");
  EXPECT_TRUE(errors::IsGone(gone));
  EXPECT_FALSE(errors::IsResourceExpired(gone));

  Error terminating = DecodeApiError(
      403, R"({"kind":"Status","reason":"Forbidden","message":"namespace ns is being terminated",
        "details":{"name":"p","kind":"pods","causes":[{"reason":"NamespaceTerminating",
        "message":"namespace ns is being terminated","field":"metadata.namespace"}]},"code":403})");
  EXPECT_TRUE(errors::IsNamespaceTerminating(terminating));
  EXPECT_TRUE(errors::IsForbidden(terminating));

  Error odd = DecodeApiError(404, R"({"kind":"Status","reason":"SomethingNew","code":404})");
  EXPECT_TRUE(errors::IsNotFound(odd));

  // A Status without reason or code takes them from the HTTP answer.
  Error bare = DecodeApiError(409, R"({"kind":"Status","message":"m"})");
  EXPECT_EQ(bare.code, 409);
  EXPECT_EQ(bare.reason, errors::reason::kConflict);
}

// 1.7 / 1.8 the object of a watch ERROR event decodes as a Status.
TEST(ApiErrorsTest, DecodeStatusRejectsNonStatus) {
  EXPECT_FALSE(DecodeStatus(R"({"kind":"Pod"})").has_value());
  EXPECT_FALSE(DecodeStatus("not json").has_value());
  auto s = DecodeStatus(R"({"kind":"Status","code":410,"reason":"Expired","message":"too old"})");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->code, 410);
  EXPECT_TRUE(errors::IsResourceExpired(*s));
}

}  // namespace
// An error answer to a protobuf Accept: kube-apiserver v1.37.2's protobuf Status for a LIST at a
// compacted resourceVersion (recorded with curl), read like its JSON form.
TEST(ApiErrorsTest, ProtobufStatusBody) {
  const std::string body(
      "\x6b\x38\x73\x00\x0a\x0c\x0a\x02\x76\x31\x12\x06\x53\x74\x61\x74\x75\x73\x12\x54\x0a\x06\x0a"
      "\x00"
      "\x12\x00\x1a\x00\x12\x07\x46\x61\x69\x6c\x75\x72\x65\x1a\x35\x54\x68\x65\x20\x72\x65\x73\x6f"
      "\x75"
      "\x72\x63\x65\x56\x65\x72\x73\x69\x6f\x6e\x20\x66\x6f\x72\x20\x74\x68\x65\x20\x70\x72\x6f\x76"
      "\x69"
      "\x64\x65\x64\x20\x6c\x69\x73\x74\x20\x69\x73\x20\x74\x6f\x6f\x20\x6f\x6c\x64\x2e\x22\x07\x45"
      "\x78"
      "\x70\x69\x72\x65\x64\x30\x9a\x03\x1a\x00\x22\x00",
      108);
  Error e = DecodeApiError(410, body);
  EXPECT_EQ(e.code, 410);
  EXPECT_EQ(e.reason, "Expired");
  EXPECT_TRUE(errors::IsResourceExpired(e));
  EXPECT_NE(e.message.find("The resourceVersion for the provided list is too old"),
            std::string::npos)
      << e.message;
  // Not a Status (a Pod's envelope): falls back to the HTTP code, as for a non-Status JSON body.
  Error other = DecodeApiError(500, std::string("k8s\0\x0a\x09\x0a\x02v1\x12\x03Pod", 15));
  EXPECT_EQ(other.code, 500);
  EXPECT_EQ(other.reason, errors::ReasonForCode(500));
}

}  // namespace kcm::client
