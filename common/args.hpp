// Command-line parsing for the lesson binaries: every option is declared
// once (name, value, help), --help prints them, and anything else gets one
// line naming the argument and what is allowed, then exit code 2.
#pragma once

#include "exit_codes.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

struct OptionSpec {
    std::string name;       // "--m"
    std::string valueName;  // "N"; empty for a flag
    std::string help;
};

class Args {
public:
    Args(std::string program, std::string summary, std::vector<OptionSpec> options, int argc,
         char** argv)
        : program_(std::move(program)), summary_(std::move(summary)), options_(std::move(options)) {
        options_.push_back({"--help", "", "print this help and exit"});
        for (int i = 1; i < argc; ++i) {
            std::string word = argv[i];
            std::string value;
            bool hasInlineValue = false;
            if (auto eq = word.find('='); word.rfind("--", 0) == 0 && eq != std::string::npos) {
                value = word.substr(eq + 1);
                word = word.substr(0, eq);
                hasInlineValue = true;
            }
            const OptionSpec* spec = find(word);
            if (!spec) fail("unknown argument '" + std::string(argv[i]) + "' (see --help)");
            if (spec->valueName.empty()) {
                if (hasInlineValue) fail(word + " takes no value");
            } else if (!hasInlineValue) {
                if (i + 1 >= argc) fail(word + " needs a value " + spec->valueName);
                value = argv[++i];
            }
            given_[word] = value;
        }
        if (has("--help")) {
            printUsage();
            std::exit(0);
        }
    }

    bool has(const std::string& name) const { return given_.count(name) != 0; }

    std::string text(const std::string& name, const std::string& fallback) const {
        auto it = given_.find(name);
        return it == given_.end() ? fallback : it->second;
    }

    // A count: plain digits, or 2^K for powers of two (2^27 = 134217728).
    size_t count(const std::string& name, size_t fallback, size_t minimum = 0) const {
        auto it = given_.find(name);
        if (it == given_.end()) return fallback;
        size_t value = parseCount(name, it->second);
        if (value < minimum)
            fail(name + " must be at least " + std::to_string(minimum) + ", got '" + it->second +
                 "'");
        return value;
    }

    // A comma-separated list of counts, each at least `minimum`.
    std::vector<size_t> countList(const std::string& name, std::vector<size_t> fallback,
                                  size_t minimum = 0) const {
        auto it = given_.find(name);
        if (it == given_.end()) return fallback;
        std::vector<size_t> values;
        size_t start = 0;
        const std::string& list = it->second;
        while (start <= list.size()) {
            size_t comma = list.find(',', start);
            if (comma == std::string::npos) comma = list.size();
            size_t value = parseCount(name, list.substr(start, comma - start));
            if (value < minimum)
                fail(name + " values must be at least " + std::to_string(minimum) + ", got '" +
                     list + "'");
            values.push_back(value);
            start = comma + 1;
        }
        return values;
    }

    // One of a fixed set of words.
    std::string choice(const std::string& name, const std::string& fallback,
                       const std::vector<std::string>& allowed) const {
        std::string value = text(name, fallback);
        for (const auto& word : allowed)
            if (word == value) return value;
        std::string list;
        for (const auto& word : allowed) list += (list.empty() ? "" : ", ") + word;
        fail(name + " must be one of " + list + "; got '" + value + "'");
    }

    [[noreturn]] void fail(const std::string& message) const {
        std::fprintf(stderr, "%s: %s\n", program_.c_str(), message.c_str());
        std::exit(kExitBadArgument);
    }

private:
    const OptionSpec* find(const std::string& name) const {
        for (const auto& spec : options_)
            if (spec.name == name) return &spec;
        return nullptr;
    }

    size_t parseCount(const std::string& name, const std::string& word) const {
        const std::string bad = name + " expects a whole number such as 1000 or 2^20, got '" + word + "'";
        auto digitsOnly = [](const std::string& s) {
            return !s.empty() && s.size() <= 20 &&
                   s.find_first_not_of("0123456789") == std::string::npos;
        };
        if (auto caret = word.find('^'); caret != std::string::npos) {
            if (word.substr(0, caret) != "2" || !digitsOnly(word.substr(caret + 1))) fail(bad);
            unsigned long exponent = std::strtoul(word.c_str() + caret + 1, nullptr, 10);
            if (exponent > 62) fail(name + " is too large: '" + word + "'");
            return size_t{1} << exponent;
        }
        if (!digitsOnly(word)) fail(bad);
        errno = 0;
        unsigned long long value = std::strtoull(word.c_str(), nullptr, 10);
        if (errno != 0 || value > (1ull << 62)) fail(name + " is too large: '" + word + "'");
        return static_cast<size_t>(value);
    }

    void printUsage() const {
        std::printf("%s\n\nusage: %s [options]\n\n", summary_.c_str(), program_.c_str());
        for (const auto& spec : options_) {
            std::string left = spec.name + (spec.valueName.empty() ? "" : " " + spec.valueName);
            std::printf("  %-24s %s\n", left.c_str(), spec.help.c_str());
        }
        std::printf("\nexit codes: 0 pass, 1 a check failed, 2 bad argument, 3 CUDA error or "
                    "too little memory, 77 no CUDA device\n");
    }

    std::string program_, summary_;
    std::vector<OptionSpec> options_;
    std::map<std::string, std::string> given_;
};
