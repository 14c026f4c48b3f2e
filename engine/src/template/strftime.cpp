// strftime for the strftime_now() global: Python's datetime.strftime on a naive datetime in the
// C locale (%z and %Z empty, %f microseconds), with glibc's '-', '_' and '0' padding flags.
// Implemented here rather than through the C library so the process locale cannot change it.
#include "template/errors.hpp"
#include "template/pyformat.hpp"

#include <cstdio>
#include <ctime>

namespace arbor::tmpl {
namespace {

struct DateTime {
    int year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0, micro = 0;
};

// Days since 1970-01-01 of a proleptic Gregorian date.
int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

bool leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
int days_in_month(int y, int m) {
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : d[m - 1];
}

bool parse_iso(const std::string& s, DateTime& t) {
    int n = 0;
    char sep = 0;
    if (std::sscanf(s.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%n", &t.year, &t.month, &t.day, &sep, &t.hour, &t.minute,
                    &t.second, &n) < 7)
        return false;
    if (sep != 'T' && sep != ' ') return false;
    size_t p = size_t(n);
    if (p < s.size() && s[p] == '.') {
        int digits = 0;
        for (++p; p < s.size() && s[p] >= '0' && s[p] <= '9'; ++p, ++digits)
            if (digits < 6) t.micro = t.micro * 10 + (s[p] - '0');
        for (; digits < 6; ++digits) t.micro *= 10;
    }
    if (p != s.size()) return false;
    return t.month >= 1 && t.month <= 12 && t.day >= 1 && t.day <= days_in_month(t.year, t.month) && t.hour < 24 &&
           t.minute < 60 && t.second < 60 && t.year >= 1;
}

const char* kDays[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
const char* kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                         "July",    "August",   "September", "October", "November", "December"};

}  // namespace

std::string strftime_now(std::string_view fmt, const std::optional<std::string>& now_iso) {
    DateTime t;
    if (now_iso) {
        if (!parse_iso(*now_iso, t)) fail("invalid pinned time '" + *now_iso + "' (expected YYYY-MM-DDTHH:MM:SS)");
    } else {
        std::time_t now = std::time(nullptr);
        std::tm tm{};
        localtime_r(&now, &tm);
        t = DateTime{tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, 0};
    }
    const int64_t days = days_from_civil(t.year, t.month, t.day);
    const int wday = int(((days % 7) + 11) % 7);  // 1970-01-01 was a Thursday (4)
    const int yday = int(days - days_from_civil(t.year, 1, 1));  // 0-based
    // ISO 8601 week-based year and week.
    auto weeks_in_year = [](int64_t y) {
        auto p = [](int64_t x) { return (x + x / 4 - x / 100 + x / 400) % 7; };
        return 52 + ((p(y) == 4 || p(y - 1) == 3) ? 1 : 0);
    };
    const int iso_wday = wday == 0 ? 7 : wday;
    int iso_year = t.year;
    int iso_week = (yday + 1 - iso_wday + 10) / 7;
    if (iso_week < 1) {
        --iso_year;
        iso_week = weeks_in_year(iso_year);
    } else if (iso_week > weeks_in_year(t.year)) {
        iso_week = 1;
        ++iso_year;
    }
    char pin_buf[64];
    std::snprintf(pin_buf, sizeof pin_buf, "%04d-%02d-%02dT%02d:%02d:%02d", t.year, t.month, t.day, t.hour, t.minute,
                  t.second);
    const std::optional<std::string> pin = std::string(pin_buf);

    std::string out;
    for (size_t p = 0; p < fmt.size(); ++p) {
        if (fmt[p] != '%' || p + 1 >= fmt.size()) {
            out += fmt[p];
            continue;
        }
        size_t start = p;
        char flag = 0;
        char c = fmt[++p];
        if ((c == '-' || c == '_' || c == '0' || c == '^' || c == '#') && p + 1 < fmt.size()) {
            flag = c;
            c = fmt[++p];
        }
        auto num = [&](int64_t v, int width, char padc = '0') {
            char buf[32];
            if (flag == '-') std::snprintf(buf, sizeof buf, "%lld", (long long)v);
            else if (flag == '_' || (padc == ' ' && flag != '0')) std::snprintf(buf, sizeof buf, "%*lld", width, (long long)v);
            else std::snprintf(buf, sizeof buf, "%0*lld", width, (long long)v);
            out += buf;
        };
        auto text = [&](std::string s) {
            if (flag == '^')
                for (char& ch : s) ch = char(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
            out += s;
        };
        const int hour12 = t.hour % 12 == 0 ? 12 : t.hour % 12;
        switch (c) {
            case 'a': text(std::string(kDays[wday], 3)); break;
            case 'A': text(kDays[wday]); break;
            case 'b': case 'h': text(std::string(kMonths[t.month - 1], 3)); break;
            case 'B': text(kMonths[t.month - 1]); break;
            case 'c':
                out += strftime_now("%a %b %e %H:%M:%S %Y", pin);
                break;
            case 'C': num(t.year / 100, 2); break;
            case 'd': num(t.day, 2); break;
            case 'D': out += strftime_now("%m/%d/%y", pin); break;
            case 'e': num(t.day, 2, ' '); break;
            case 'f': num(t.micro, 6); break;
            case 'F': out += strftime_now("%Y-%m-%d", pin); break;
            case 'g': num(iso_year % 100, 2); break;
            case 'G': num(iso_year, 1); break;
            case 'H': num(t.hour, 2); break;
            case 'I': num(hour12, 2); break;
            case 'j': num(yday + 1, 3); break;
            case 'k': num(t.hour, 2, ' '); break;
            case 'l': num(hour12, 2, ' '); break;
            case 'm': num(t.month, 2); break;
            case 'M': num(t.minute, 2); break;
            case 'n': out += '\n'; break;
            case 'p': text(t.hour < 12 ? "AM" : "PM"); break;
            case 'P': out += t.hour < 12 ? "am" : "pm"; break;
            case 'r': out += strftime_now("%I:%M:%S %p", pin); break;
            case 'R': out += strftime_now("%H:%M", pin); break;
            case 's': num(days * 86400 + t.hour * 3600 + t.minute * 60 + t.second, 1); break;
            case 'S': num(t.second, 2); break;
            case 't': out += '\t'; break;
            case 'T': out += strftime_now("%H:%M:%S", pin); break;
            case 'u': num(iso_wday, 1); break;
            case 'U': num((yday + 7 - wday) / 7, 2); break;
            case 'V': num(iso_week, 2); break;
            case 'w': num(wday, 1); break;
            case 'W': num((yday + 7 - (wday + 6) % 7) / 7, 2); break;
            case 'x': out += strftime_now("%m/%d/%y", pin); break;
            case 'X': out += strftime_now("%H:%M:%S", pin); break;
            case 'y': num(t.year % 100, 2); break;
            case 'Y': num(t.year, 1); break;
            case 'z': case 'Z': break;
            case '%': out += '%'; break;
            default: out.append(fmt.substr(start, p - start + 1));
        }
    }
    return out;
}

}  // namespace arbor::tmpl
