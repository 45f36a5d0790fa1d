// Metric handles over the process-wide Prometheus registry (the one piece of global mutable state
// the code base allows). Headers stay free of prometheus-cpp; only metrics.cc and the HTTP server
// see it. Families are created on first use and merged by name, so constructing the same
// *Vec twice is safe. All handles are thread-safe and cheap to copy; resolve a labelled child
// once (With) and keep it on hot paths.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace kcm::metrics {

class Counter {
 public:
  Counter() = default;
  void Inc(double v = 1.0) const;
  double Value() const;

 private:
  friend class CounterVec;
  explicit Counter(void* impl) : impl_(impl) {}
  void* impl_ = nullptr;  // prometheus::Counter*, owned by the registry.
};

class Gauge {
 public:
  Gauge() = default;
  void Set(double v) const;
  void Inc(double v = 1.0) const;
  void Dec(double v = 1.0) const;
  double Value() const;

 private:
  friend class GaugeVec;
  explicit Gauge(void* impl) : impl_(impl) {}
  void* impl_ = nullptr;
};

class Histogram {
 public:
  Histogram() = default;
  void Observe(double v) const;
  // Sum and count of observations, for tests.
  double Sum() const;
  uint64_t Count() const;
  // (upper bound, cumulative count) per bucket, +Inf last, for tests.
  std::vector<std::pair<double, uint64_t>> Buckets() const;

 private:
  friend class HistogramVec;
  explicit Histogram(void* impl) : impl_(impl) {}
  void* impl_ = nullptr;
};

class CounterVec {
 public:
  CounterVec(const std::string& name, const std::string& help,
             std::vector<std::string> label_names);
  // Label values in the order of label_names.
  Counter With(std::initializer_list<std::string> values) const;
  Counter With(const std::vector<std::string>& values) const;

 private:
  void* family_;
  std::vector<std::string> label_names_;
};

class GaugeVec {
 public:
  GaugeVec(const std::string& name, const std::string& help, std::vector<std::string> label_names);
  Gauge With(std::initializer_list<std::string> values) const;
  Gauge With(const std::vector<std::string>& values) const;

 private:
  void* family_;
  std::vector<std::string> label_names_;
};

class HistogramVec {
 public:
  HistogramVec(const std::string& name, const std::string& help,
               std::vector<std::string> label_names, std::vector<double> buckets);
  Histogram With(std::initializer_list<std::string> values) const;
  Histogram With(const std::vector<std::string>& values) const;

 private:
  void* family_;
  std::vector<std::string> label_names_;
  std::vector<double> buckets_;
};

// Exponential bucket bounds: start, start*factor, ... (count values).
std::vector<double> ExponentialBuckets(double start, double factor, int count);

// The registry's current state in the Prometheus text exposition format (what /metrics serves).
std::string SerializeText();

}  // namespace kcm::metrics
