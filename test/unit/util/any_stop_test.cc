#include "pkg/util/any_stop.h"

#include <gtest/gtest.h>

#include <stop_token>

namespace kcm {
namespace {

// The token is requested by either source, whichever comes first, and by one already requested
// when it is made.
TEST(AnyStopTest, EitherSourceStopsIt) {
  for (int which = 0; which < 2; ++which) {
    std::stop_source a, b;
    const AnyStop any(a.get_token(), b.get_token());
    EXPECT_FALSE(any.token().stop_requested());
    (which == 0 ? a : b).request_stop();
    EXPECT_TRUE(any.token().stop_requested()) << "source " << which;
  }
  std::stop_source done;
  done.request_stop();
  const AnyStop already(std::stop_token(), done.get_token());
  EXPECT_TRUE(already.token().stop_requested());
}

}  // namespace
}  // namespace kcm
