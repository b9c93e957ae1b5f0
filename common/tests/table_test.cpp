// CTest target common_table_test (host only): the CSV every lesson's --csv
// writes. Each row must be in the file as soon as the table prints it (a run
// stopped by a time limit keeps what it measured), with the run line first,
// a header line per table, and cells quoted where they hold a comma or a
// quote and trimmed of the padding the printed table uses.
#include "../selftest.hpp"
#include "../table.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

// The file as it is on disk now, while the writer still holds it open.
std::string onDisk(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

int main() {
    const std::string path = "common_table_test.csv";
    csvRun().card = "test card", csvRun().date = "2026-12-05";
    {
        CsvFile csv;
        csv.open(path, "table_test");
        expect(onDisk(path) == "run,table_test,test card,2026-12-05\n", "the run line is on disk once the file opens");
        Table table("sort, 1000 keys", {{"kernel", 12, true}, {"time (ms)", 9}}, &csv, false);
        table.row({"a \"fast\" one", "  0.125"});
        expect(onDisk(path) ==
                   "run,table_test,test card,2026-12-05\n\ntable,kernel,time (ms)\n"
                   "\"sort, 1000 keys\",\"a \"\"fast\"\" one\",0.125\n",
               "a row is on disk as soon as it is printed: titles and cells quoted, padding trimmed");
        table.row({"plain", "1.5"});
        const std::string last = "\"sort, 1000 keys\",plain,1.5\n", text = onDisk(path);
        expect(text.size() > last.size() && text.compare(text.size() - last.size(), last.size(), last) == 0,
               "the second row follows the first");
    }
    std::remove(path.c_str());
    return selftestVerdict();
}
