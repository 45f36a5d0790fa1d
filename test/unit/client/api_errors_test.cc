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
}  // namespace kcm::client
