#include "pkg/metrics/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <memory>
#include <stdexcept>

#include "pkg/metrics/registry.h"

namespace kcm::metrics {
namespace {

prometheus::Labels MakeLabels(const std::vector<std::string>& names,
                              const std::vector<std::string>& values) {
  if (names.size() != values.size()) {
    throw std::invalid_argument("metrics: label value count does not match label names");
  }
  prometheus::Labels labels;
  for (size_t i = 0; i < names.size(); ++i) labels.emplace(names[i], values[i]);
  return labels;
}

}  // namespace

prometheus::Registry& GlobalRegistry() {
  static auto* registry = new prometheus::Registry();  // Never destroyed: handles outlive main.
  return *registry;
}

void Counter::Inc(double v) const {
  if (impl_) static_cast<prometheus::Counter*>(impl_)->Increment(v);
}
double Counter::Value() const {
  return impl_ ? static_cast<prometheus::Counter*>(impl_)->Value() : 0.0;
}

void Gauge::Set(double v) const {
  if (impl_) static_cast<prometheus::Gauge*>(impl_)->Set(v);
}
void Gauge::Inc(double v) const {
  if (impl_) static_cast<prometheus::Gauge*>(impl_)->Increment(v);
}
void Gauge::Dec(double v) const {
  if (impl_) static_cast<prometheus::Gauge*>(impl_)->Decrement(v);
}
double Gauge::Value() const {
  return impl_ ? static_cast<prometheus::Gauge*>(impl_)->Value() : 0;
}

void Histogram::Observe(double v) const {
  if (impl_) static_cast<prometheus::Histogram*>(impl_)->Observe(v);
}
double Histogram::Sum() const {
  if (!impl_) return 0;
  return static_cast<prometheus::Histogram*>(impl_)->Collect().histogram.sample_sum;
}
uint64_t Histogram::Count() const {
  if (!impl_) return 0;
  return static_cast<prometheus::Histogram*>(impl_)->Collect().histogram.sample_count;
}
std::vector<std::pair<double, uint64_t>> Histogram::Buckets() const {
  std::vector<std::pair<double, uint64_t>> out;
  if (!impl_) return out;
  for (const auto& b : static_cast<prometheus::Histogram*>(impl_)->Collect().histogram.bucket) {
    out.emplace_back(b.upper_bound, b.cumulative_count);
  }
  return out;
}

CounterVec::CounterVec(const std::string& name, const std::string& help,
                       std::vector<std::string> label_names)
    : family_(&prometheus::BuildCounter().Name(name).Help(help).Register(GlobalRegistry())),
      label_names_(std::move(label_names)) {}
Counter CounterVec::With(std::initializer_list<std::string> values) const {
  return With(std::vector<std::string>(values));
}
Counter CounterVec::With(const std::vector<std::string>& values) const {
  auto* family = static_cast<prometheus::Family<prometheus::Counter>*>(family_);
  return Counter(&family->Add(MakeLabels(label_names_, values)));
}

GaugeVec::GaugeVec(const std::string& name, const std::string& help,
                   std::vector<std::string> label_names)
    : family_(&prometheus::BuildGauge().Name(name).Help(help).Register(GlobalRegistry())),
      label_names_(std::move(label_names)) {}
Gauge GaugeVec::With(std::initializer_list<std::string> values) const {
  return With(std::vector<std::string>(values));
}
Gauge GaugeVec::With(const std::vector<std::string>& values) const {
  auto* family = static_cast<prometheus::Family<prometheus::Gauge>*>(family_);
  return Gauge(&family->Add(MakeLabels(label_names_, values)));
}

HistogramVec::HistogramVec(const std::string& name, const std::string& help,
                           std::vector<std::string> label_names, std::vector<double> buckets)
    : family_(&prometheus::BuildHistogram().Name(name).Help(help).Register(GlobalRegistry())),
      label_names_(std::move(label_names)),
      buckets_(std::move(buckets)) {}
Histogram HistogramVec::With(std::initializer_list<std::string> values) const {
  return With(std::vector<std::string>(values));
}
Histogram HistogramVec::With(const std::vector<std::string>& values) const {
  auto* family = static_cast<prometheus::Family<prometheus::Histogram>*>(family_);
  return Histogram(&family->Add(MakeLabels(label_names_, values), buckets_));
}

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> out;
  out.reserve(count);
  double v = start;
  for (int i = 0; i < count; ++i, v *= factor) out.push_back(v);
  return out;
}

std::string SerializeText() {
  prometheus::TextSerializer serializer;
  return serializer.Serialize(GlobalRegistry().Collect());
}

}  // namespace kcm::metrics
