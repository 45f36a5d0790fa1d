#include "pkg/controller/slow_start.h"

#include <gtest/gtest.h>

#include <functional>
#include <stop_token>
#include <string>
#include <vector>

#include "pkg/util/errors.h"

namespace kcm::controller {
namespace {

Status Fail(const std::string& message) {
  return Error::Local("Test", message);
}

// A batch as a PodControlInterface's batch call makes it: the calls one after another, each
// skipped once `stop` is requested; the sizes of the batches asked for are recorded.
class Batches {
 public:
  explicit Batches(std::function<Status()> call, std::stop_token stop = {})
      : call_(std::move(call)), stop_(std::move(stop)) {}

  SlowStartBatchFn fn() {
    return [this](int size) {
      sizes_.push_back(size);
      std::vector<WriteOutcome> out;
      for (int i = 0; i < size; ++i) {
        if (stop_.stop_requested()) {
          out.push_back({errors::Canceled("not sent"), true});
        } else {
          ++calls_;
          out.push_back({call_()});
        }
      }
      return out;
    };
  }
  int calls() const { return calls_; }
  const std::vector<int>& sizes() const { return sizes_; }

 private:
  std::function<Status()> call_;
  std::stop_token stop_;
  int calls_ = 0;
  std::vector<int> sizes_;
};

// R7, upstream's slowStartBatch (pkg/controller/replicaset/replica_set.go): batches 1, 2, 4, …;
// a failure in the third batch (calls 4-7) stops there: the batch finishes, its other calls count
// as successes, and no further batch starts.
TEST(SlowStartBatchTest, StopsAfterFirstBatchWithFailure) {
  int n = 0;
  Batches b([&]() -> Status { return ++n == 4 ? Fail("call 4") : OkStatus(); });
  SlowStartResult r = SlowStartBatch(100, 1, b.fn());
  EXPECT_EQ(b.sizes(), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(b.calls(), 1 + 2 + 4);
  EXPECT_EQ(r.successes, 6);
  ASSERT_FALSE(r.first_error.ok());
  EXPECT_EQ(r.first_error.error().message, "call 4");
}

// R7: every call of a failing batch may fail; successes count only earlier batches, and the
// first error in call order is the one returned.
TEST(SlowStartBatchTest, AllFailingBatch) {
  int n = 0;
  Batches b([&]() -> Status { return ++n > 3 ? Fail("quota " + std::to_string(n)) : OkStatus(); });
  SlowStartResult r = SlowStartBatch(10, 1, b.fn());
  EXPECT_EQ(b.calls(), 7);
  EXPECT_EQ(r.successes, 3);
  ASSERT_FALSE(r.first_error.ok());
  EXPECT_EQ(r.first_error.error().message, "quota 4");
}

// R7: with no failure every call runs; the last batch is capped by what remains (1,2,4,3).
TEST(SlowStartBatchTest, RunsAllWhenNothingFails) {
  Batches b([] { return OkStatus(); });
  SlowStartResult r = SlowStartBatch(10, 1, b.fn());
  EXPECT_EQ(b.sizes(), (std::vector<int>{1, 2, 4, 3}));
  EXPECT_EQ(r.successes, 10);
  EXPECT_TRUE(r.first_error.ok());
  // A failure at call 8 (first of the capped last batch of 3): the batch still completes.
  int n = 0;
  Batches c([&]() -> Status { return ++n == 8 ? Fail("x") : OkStatus(); });
  r = SlowStartBatch(10, 1, c.fn());
  EXPECT_EQ(c.calls(), 10);
  EXPECT_EQ(r.successes, 9);
}

// R7: count 0 calls nothing; an initial batch larger than count is one batch.
TEST(SlowStartBatchTest, EdgeSizes) {
  Batches none([] { return OkStatus(); });
  EXPECT_EQ(SlowStartBatch(0, 1, none.fn()).successes, 0);
  EXPECT_TRUE(none.sizes().empty());
  int n = 0;
  Batches b([&]() -> Status { return ++n == 1 ? Fail("first") : OkStatus(); });
  SlowStartResult r = SlowStartBatch(3, 8, b.fn());
  EXPECT_EQ(b.sizes(), (std::vector<int>{3}));  // one batch of 3, no second batch
  EXPECT_EQ(r.successes, 2);
}

// Stop before the run: no batch at all, and the result says it was stopped.
TEST(SlowStartBatchTest, StopRequestedBeforeStartCallsNothing) {
  std::stop_source stop;
  stop.request_stop();
  Batches b([] { return OkStatus(); }, stop.get_token());
  SlowStartResult r = SlowStartBatch(500, 1, b.fn(), stop.get_token());
  EXPECT_TRUE(b.sizes().empty());
  EXPECT_EQ(r.successes, 0);
  ASSERT_FALSE(r.first_error.ok());
  EXPECT_EQ(r.first_error.error().reason, "Canceled");
}

// Stop during a batch (the lease is lost mid scale-up): the calls sent finish, the batch's calls
// not yet sent are skipped, and no further batch starts: batches 1, 2, 4 → calls 1..7; stop
// during call 5 leaves calls 6 and 7 (and 8+) unsent.
TEST(SlowStartBatchTest, StopDuringBatchStartsNoFurtherCall) {
  std::stop_source stop;
  int n = 0;
  Batches b(
      [&] {
        if (++n == 5) stop.request_stop();
        return OkStatus();
      },
      stop.get_token());
  SlowStartResult r = SlowStartBatch(500, 1, b.fn(), stop.get_token());
  EXPECT_EQ(b.calls(), 5);
  EXPECT_EQ(b.sizes(), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(r.successes, 5);
  ASSERT_FALSE(r.first_error.ok());
  EXPECT_EQ(r.first_error.error().reason, "Canceled");
  EXPECT_NE(r.first_error.error().message.find("5 of 500"), std::string::npos)
      << r.first_error.error().message;
}

// A stop requested by the last call of batch 2 means batch 3 (4 calls) is never asked for.
TEST(SlowStartBatchTest, StopEndsBeforeTheNextBatch) {
  std::stop_source stop;
  int n = 0;
  Batches b(
      [&] {
        if (++n == 3) stop.request_stop();
        return OkStatus();
      },
      stop.get_token());
  SlowStartResult r = SlowStartBatch(500, 1, b.fn(), stop.get_token());
  EXPECT_EQ(b.sizes(), (std::vector<int>{1, 2}));
  EXPECT_EQ(r.successes, 3);
  EXPECT_FALSE(r.first_error.ok());
}

// A failure in a batch cut short by the stop is the error returned, not the stop: the sent calls
// count, the skipped ones neither succeed nor fail.
TEST(SlowStartBatchTest, FailureBeforeTheStopIsTheError) {
  std::stop_source stop;
  int n = 0;
  Batches b(
      [&]() -> Status {
        if (++n == 4) return Fail("call 4");
        if (n == 5) stop.request_stop();
        return OkStatus();
      },
      stop.get_token());
  SlowStartResult r = SlowStartBatch(500, 1, b.fn(), stop.get_token());
  EXPECT_EQ(b.calls(), 5);
  EXPECT_EQ(r.successes, 4);
  ASSERT_FALSE(r.first_error.ok());
  EXPECT_EQ(r.first_error.error().message, "call 4");
}

}  // namespace
}  // namespace kcm::controller
