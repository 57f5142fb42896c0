#include <iostream>
#include <string>

// The first element of "legal_actions": a balanced {...}, strings skipped over.
int main() {
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.find("\"type\":\"update\"") != std::string::npos ||
            line.find("\"type\":\"result\"") != std::string::npos) continue;
        auto at = line.find("\"legal_actions\":[");
        if (at == std::string::npos) continue;
        auto start = line.find('{', at);
        int depth = 0;
        bool in_string = false;
        size_t i = start;
        for (; i < line.size(); i++) {
            char c = line[i];
            if (in_string) {
                if (c == '\\') i++;
                else if (c == '"') in_string = false;
            } else if (c == '"') in_string = true;
            else if (c == '{') depth++;
            else if (c == '}' && --depth == 0) break;
        }
        std::cout << "{\"action\":" << line.substr(start, i - start + 1) << "}" << std::endl;
    }
}
