/* A random bot for every game as a stdin/stdout program: no HTTP, no JSON library.
 *
 *   cc -O2 -o random_bot bots/c/random_bot.c
 *   referee bridge --port 8001 -- ./random_bot [seed]
 *   referee play --game aladino --bot "cmd:./random_bot 7" --bot "cmd:./random_bot 8"
 *
 * Each line on stdin is one JSON message from the referee. A decision holds a top-level
 * "legal_actions" array: the bot copies one element, chosen with its own seeded
 * generator, verbatim into one answer line {"action": <element>, "log": "new"} (the bot
 * reads no log: "new" asks for its new entries only, docs/bots.md). A result notice
 * ("type": "result") ends the match: the bot exits; an update ("type": "update") gets no
 * answer line (its answer would be taken for the next decision's). The JSON is scanned, not parsed: the
 * scanner only skips strings (with their escapes) and nested brackets, and never reads
 * past the end of the line, whatever the line holds.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *start;
    size_t length;
} Span;

static uint64_t rng_state;

/* SplitMix64: small, and the same numbers on every platform. */
static uint64_t next_random(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

/* Past the JSON string whose opening quote is at p; NULL when it is not closed. */
static const char *skip_string(const char *p) {
    for (p++; *p; p++) {
        if (*p == '\\') {
            if (!*++p) return NULL;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* Past the JSON value at p (string, object, array or scalar); NULL when malformed. */
static const char *skip_value(const char *p) {
    if (*p == '"') return skip_string(p);
    if (*p == '{' || *p == '[') {
        size_t depth = 0;
        while (*p) {
            if (*p == '"') {
                p = skip_string(p);
                if (!p) return NULL;
                continue;
            }
            if (*p == '{' || *p == '[') {
                depth++;
            } else if (*p == '}' || *p == ']') {
                if (--depth == 0) return p + 1;
            }
            p++;
        }
        return NULL;
    }
    const char *start = p;
    while (*p && !strchr(",}] \t\r\n", *p)) p++;
    return p > start ? p : NULL;
}

/* The value of `key` in the top-level object of `line`; 0 when there is none. */
static int find_member(const char *line, const char *key, Span *value) {
    size_t key_length = strlen(key);
    const char *p = skip_space(line);
    if (*p != '{') return 0;
    p = skip_space(p + 1);
    while (*p == '"') {
        const char *name_end = skip_string(p);
        if (!name_end) return 0;
        const char *colon = skip_space(name_end);
        if (*colon != ':') return 0;
        const char *start = skip_space(colon + 1);
        const char *end = skip_value(start);
        if (!end) return 0;
        if ((size_t)(name_end - p - 2) == key_length && !memcmp(p + 1, key, key_length)) {
            value->start = start;
            value->length = (size_t)(end - start);
            return 1;
        }
        p = skip_space(end);
        if (*p == ',') p = skip_space(p + 1);
    }
    return 0;
}

/* Counts the elements of the array `array`; when `wanted` < the count, stores that one. */
static size_t array_element(Span array, size_t wanted, Span *element) {
    size_t count = 0;
    const char *p = skip_space(array.start + 1);
    while (*p && *p != ']') {
        const char *end = skip_value(p);
        if (!end) break;
        if (count == wanted) {
            element->start = p;
            element->length = (size_t)(end - p);
        }
        count++;
        p = skip_space(end);
        if (*p == ',') p = skip_space(p + 1);
    }
    return count;
}

/* Whether the message's "type" is `quoted` (a JSON string, quotes included). */
static int has_type(const char *line, const char *quoted) {
    Span type;
    size_t length = strlen(quoted);
    return find_member(line, "type", &type) && type.length == length &&
           !memcmp(type.start, quoted, length);
}

/* Answers one decision line; an unreadable one gets an answer without an action. */
static void answer(const char *line) {
    Span legal, action;
    size_t count = 0;
    if (find_member(line, "legal_actions", &legal) && *legal.start == '[') {
        count = array_element(legal, (size_t)-1, &action);
    }
    if (count == 0) {
        fprintf(stderr, "no legal_actions in: %.200s\n", line);
        fputs("{\"error\": \"no legal_actions in the message\"}\n", stdout);
    } else {
        array_element(legal, (size_t)(next_random() % count), &action);
        printf("{\"action\": %.*s, \"log\": \"new\"}\n", (int)action.length, action.start);
    }
    fflush(stdout);
}

int main(int argc, char **argv) {
    rng_state = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    char *line = NULL;
    size_t capacity = 0;
    while (getline(&line, &capacity, stdin) != -1) {
        if (has_type(line, "\"result\"")) break;
        if (has_type(line, "\"update\"")) continue; /* an update is never answered */
        answer(line);
    }
    free(line);
    return 0;
}
