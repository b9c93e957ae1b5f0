// Tables in the transcripts' layout (right-aligned columns under a dashed
// rule), and the same rows as CSV for scripts/plot_sweep.py.
#pragma once

#include "exit_codes.hpp"

#include <cstdio>
#include <string>
#include <vector>

// Formats a number with a fixed count of decimals: fixed(0.3461, 3) == "0.346".
inline std::string fixed(double value, int decimals) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

// Which run a CSV comes from: the card and the date (UTC), set once by the
// lesson entry when it has found the device, written as the CSV's first line.
struct CsvRun {
    std::string card = "no GPU", date;
};
inline CsvRun& csvRun() {
    static CsvRun run;
    return run;
}

// Writes every table's rows to one CSV file: first "run,<program>,<card>,<date>",
// then a header line per table ("table,<column titles>"), its rows, and a
// blank line between tables. Each line is flushed as it is written, so a run
// stopped midway (a time limit, Ctrl-C) leaves every row it printed.
class CsvFile {
public:
    CsvFile() = default;
    CsvFile(const CsvFile&) = delete;
    CsvFile& operator=(const CsvFile&) = delete;
    ~CsvFile() {
        if (file_) std::fclose(file_);
    }
    // An empty path means no CSV; an unwritable one is a bad argument.
    void open(const std::string& path, const char* program) {
        if (path.empty()) return;
        file_ = std::fopen(path.c_str(), "w");
        if (!file_) {
            std::fprintf(stderr, "%s: --csv cannot write '%s'\n", program, path.c_str());
            std::exit(kExitBadArgument);
        }
        line("run", {program, csvRun().card, csvRun().date});
    }
    void line(const std::string& table, const std::vector<std::string>& cells) {
        if (!file_) return;
        std::fprintf(file_, "%s", quoted(table).c_str());
        for (const auto& cell : cells) std::fprintf(file_, ",%s", quoted(trimmed(cell)).c_str());
        std::fprintf(file_, "\n");
        std::fflush(file_);
    }
    void blankLine() {
        if (file_) std::fprintf(file_, "\n");
    }

private:
    static std::string trimmed(const std::string& s) {
        size_t first = s.find_first_not_of(' ');
        return first == std::string::npos ? "" : s.substr(first, s.find_last_not_of(' ') - first + 1);
    }
    static std::string quoted(const std::string& s) {
        if (s.find_first_of(",\"") == std::string::npos) return s;
        std::string out = "\"";
        for (char c : s) out += (c == '"') ? "\"\"" : std::string(1, c);
        return out + "\"";
    }
    std::FILE* file_ = nullptr;
};

struct Column {
    std::string title;
    int width;
    bool leftAligned = false;  // the first, descriptive column usually is
};

class Table {
public:
    // Prints the title and the column header at once; rows follow as they
    // are measured, so a long sweep shows progress. echo false: the CSV only.
    Table(std::string title, std::vector<Column> columns, CsvFile* csv = nullptr, bool echo = true)
        : title_(std::move(title)), columns_(std::move(columns)), csv_(csv), echo_(echo) {
        if (echo_) std::printf("\n%s\n", title_.c_str());
        std::vector<std::string> titles, rules;
        for (const auto& column : columns_) {
            titles.push_back(column.title);
            rules.push_back(std::string(column.width, '-'));
        }
        print(titles);
        print(rules);
        if (csv_) {
            csv_->blankLine();
            csv_->line("table", titles);
        }
    }

    void row(const std::vector<std::string>& cells) {
        print(cells);
        if (csv_) csv_->line(title_, cells);
        std::fflush(stdout);
    }

private:
    void print(const std::vector<std::string>& cells) const {
        if (!echo_) return;
        std::string line;
        for (size_t c = 0; c < columns_.size(); ++c) {
            const std::string cell = c < cells.size() ? cells[c] : "";
            const int pad = columns_[c].width - static_cast<int>(cell.size());
            if (c > 0) line += "   ";
            if (columns_[c].leftAligned) line += cell + std::string(pad > 0 ? pad : 0, ' ');
            else line += std::string(pad > 0 ? pad : 0, ' ') + cell;
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        std::printf("%s\n", line.c_str());
    }

    std::string title_;
    std::vector<Column> columns_;
    CsvFile* csv_;
    bool echo_;
};
