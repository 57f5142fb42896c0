#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first element of "legal_actions": a balanced {...}, strings skipped over. */
static void answer(const char *line) {
    const char *at = strstr(line, "\"legal_actions\":[");
    if (!at) return;
    const char *start = strchr(at, '{');
    int depth = 0, in_string = 0;
    const char *p = start;
    for (; *p; p++) {
        if (in_string) {
            if (*p == '\\') p++;
            else if (*p == '"') in_string = 0;
        } else if (*p == '"') in_string = 1;
        else if (*p == '{') depth++;
        else if (*p == '}' && --depth == 0) break;
    }
    printf("{\"action\":%.*s}\n", (int)(p - start + 1), start);
    fflush(stdout);
}

int main(void) {
    size_t size = 0;
    char *line = NULL;
    while (getline(&line, &size, stdin) > 0) {
        if (strstr(line, "\"type\":\"update\"") || strstr(line, "\"type\":\"result\"")) continue;
        answer(line);
    }
    free(line);
    return 0;
}
