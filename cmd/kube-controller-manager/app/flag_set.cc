#include "cmd/kube-controller-manager/app/flag_set.h"

#include <algorithm>
#include <sstream>

namespace kcm::app {
namespace {

Error ParseError(const std::string& message) {
  return Error::Local("InvalidFlag", message);
}

// pflag prints a flag's column as "  -v, --v Level" or "      --name type".
std::string FlagColumn(const Flag& f) {
  std::string col = f.shorthand.empty() ? "      " : "  -" + f.shorthand + ", ";
  col += "--" + f.name;
  if (!f.type.empty()) col += " " + f.type;
  return col;
}

// Wraps `text` to `width` columns, continuation lines indented by `indent` spaces.
std::string Wrap(const std::string& text, size_t indent, size_t width) {
  std::istringstream words(text);
  std::string word, line, out;
  while (words >> word) {
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

}  // namespace

FlagSection& FlagSet::Section(const std::string& title) {
  for (auto& s : sections_) {
    if (s.title == title) return s;
  }
  return sections_.emplace_back(FlagSection{title, {}});
}

Flag* FlagSet::Find(const std::string& name) {
  for (auto& s : sections_) {
    for (auto& f : s.flags) {
      if (f.name == name) return &f;
    }
  }
  return nullptr;
}

Flag* FlagSet::FindShorthand(const std::string& shorthand) {
  for (auto& s : sections_) {
    for (auto& f : s.flags) {
      if (!f.shorthand.empty() && f.shorthand == shorthand) return &f;
    }
  }
  return nullptr;
}

bool FlagSet::Has(const std::string& name) const {
  for (const auto& s : sections_) {
    for (const auto& f : s.flags) {
      if (f.name == name) return true;
    }
  }
  return false;
}

bool FlagSet::Changed(const std::string& name) const {
  return std::find(changed_.begin(), changed_.end(), name) != changed_.end();
}

const std::string* FlagSet::LastValue(const std::string& name) const {
  auto it = last_values_.find(name);
  return it == last_values_.end() ? nullptr : &it->second;
}

Status FlagSet::Apply(Flag& flag, const std::string& value) {
  if (flag.is_bool() && value != "true" && value != "false" && value != "1" && value != "0" &&
      value != "t" && value != "f" && value != "TRUE" && value != "FALSE" && value != "True" &&
      value != "False" && value != "T" && value != "F") {
    // strconv.ParseBool's spellings, as pflag's bool flags accept.
    return ParseError("invalid argument \"" + value + "\" for \"--" + flag.name +
                      "\" flag: strconv.ParseBool: parsing \"" + value + "\": invalid syntax");
  }
  if (!Changed(flag.name)) changed_.push_back(flag.name);
  last_values_[flag.name] = value;
  if (!flag.set) {
    if (std::find(not_applicable_set_.begin(), not_applicable_set_.end(), flag.name) ==
        not_applicable_set_.end()) {
      not_applicable_set_.push_back(flag.name);
    }
    return OkStatus();
  }
  Status s = flag.set(value);
  if (s.ok()) return s;
  // pflag's wording for a value its setter refused.
  return ParseError("invalid argument \"" + value + "\" for \"--" + flag.name +
                    "\" flag: " + s.error().message);
}

Status FlagSet::Parse(const std::vector<std::string>& args) {
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional.insert(positional.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      positional.push_back(arg);
      continue;
    }
    const bool long_form = arg[1] == '-';
    std::string body = arg.substr(long_form ? 2 : 1);
    std::string name = body, value;
    bool has_value = false;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    Flag* flag = nullptr;
    if (long_form) {
      if (name.empty() || name[0] == '-' || name[0] == '=') {
        return ParseError("bad flag syntax: " + arg);
      }
      flag = Find(name);
      if (!flag) return ParseError("unknown flag: --" + name);
    } else {
      // One shorthand letter, its value attached ("-v2", "-v=2") or in the next argument.
      std::string letter = body.substr(0, 1);
      flag = FindShorthand(letter);
      if (!flag) {
        return ParseError("unknown shorthand flag: '" + letter + "' in " + arg);
      }
      if (!has_value && body.size() > 1) {
        value = body.substr(1);
        has_value = true;
      }
    }
    if (!has_value) {
      if (flag->is_bool()) {
        value = "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return ParseError("flag needs an argument: --" + flag->name);
      }
    }
    if (Status s = Apply(*flag, value); !s.ok()) return s;
  }
  if (!positional.empty()) {
    std::string list;
    for (const auto& p : positional) list += (list.empty() ? "\"" : " \"") + p + "\"";
    return ParseError("\"" + command_ + "\" does not take any arguments, got [" + list + "]");
  }
  return OkStatus();
}

void FlagSet::PrintUsage(std::ostream& out, const std::string& description) const {
  out << Wrap(description, 0, 100) << "\n\nUsage:\n  " << command_ << " [flags]\n";
  for (const auto& section : sections_) {
    std::vector<const Flag*> shown;
    size_t width = 0;
    for (const auto& f : section.flags) {
      if (f.hidden) continue;
      shown.push_back(&f);
      width = std::max(width, FlagColumn(f).size());
    }
    if (shown.empty()) continue;
    std::sort(shown.begin(), shown.end(),
              [](const Flag* a, const Flag* b) { return a->name < b->name; });
    out << "\n" << section.title << ":\n\n";
    for (const Flag* fp : shown) {
      const Flag& f = *fp;
      std::string col = FlagColumn(f);
      std::string usage = f.usage;
      if (!f.default_text.empty()) usage += " (default " + f.default_text + ")";
      out << col << std::string(width - col.size() + 3, ' ') << Wrap(usage, width + 3, 140) << "\n";
    }
  }
}

}  // namespace kcm::app
