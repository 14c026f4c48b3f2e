#include "models/MarkdownSegments.h"

#include <QStringList>

namespace arbor::app {
namespace {

// A fence line: up to three spaces, then at least three backticks or tildes.
bool fenceOf(const QString& line, QChar* ch, int* len, QString* info) {
    int i = 0;
    while (i < line.size() && i < 3 && line[i] == QLatin1Char(' ')) ++i;
    if (i >= line.size() || (line[i] != QLatin1Char('`') && line[i] != QLatin1Char('~'))) return false;
    const QChar c = line[i];
    int n = 0;
    while (i + n < line.size() && line[i + n] == c) ++n;
    if (n < 3) return false;
    const QString rest = line.mid(i + n).trimmed();
    if (c == QLatin1Char('`') && rest.contains(QLatin1Char('`'))) return false;  // inline code, not a fence
    *ch = c;
    *len = n;
    *info = rest.section(QLatin1Char(' '), 0, 0);
    return true;
}

}  // namespace

QVector<MarkdownSegment> splitMarkdown(const QString& text) {
    QVector<MarkdownSegment> out;
    const QStringList lines = text.split(QLatin1Char('\n'));
    QStringList prose, code;
    QChar fenceChar;
    int fenceLen = 0;
    QString language;
    bool inCode = false;
    auto flushProse = [&] {
        const QString body = prose.join(QLatin1Char('\n'));
        if (!body.trimmed().isEmpty()) out.push_back({MarkdownSegment::Kind::Prose, body, {}, true});
        prose.clear();
    };
    for (const QString& line : lines) {
        QChar c;
        int n = 0;
        QString info;
        if (!inCode) {
            if (fenceOf(line, &c, &n, &info)) {
                flushProse();
                inCode = true;
                fenceChar = c;
                fenceLen = n;
                language = info;
                code.clear();
            } else if (line.trimmed().isEmpty()) {
                flushProse();  // a paragraph ends
            } else {
                prose << line;
            }
            continue;
        }
        // A closing fence: the same character, at least as long, nothing after it.
        if (fenceOf(line, &c, &n, &info) && c == fenceChar && n >= fenceLen && info.isEmpty()) {
            out.push_back({MarkdownSegment::Kind::Code, code.join(QLatin1Char('\n')), language, true});
            inCode = false;
            continue;
        }
        code << line;
    }
    if (inCode)
        out.push_back({MarkdownSegment::Kind::Code, code.join(QLatin1Char('\n')), language, false});
    else
        flushProse();
    return out;
}

}  // namespace arbor::app
