// The script that drives FakeChatBackend (`arbor --fake-engine SCRIPT.json`): a model that is
// not a model, answering with fixed tokens at a fixed pace, and failing when told to, so the
// real QML can be tested deterministically.
//
//   {
//     "model": {"name": "Fake model", "architecture": "llama", "context_length": 4096,
//               "backend": "fake", "device": "scripted", "thinking": false},
//     "token_ms": 20,            // pause before each token
//     "prefill_ms": 0,           // pause before the first token
//     "load_ms": 0,              // pause while "loading"
//     "load_error": "",          // non-empty: every load fails with this message
//     "replies": [               // the first whose "when" occurs in the last user message
//       {"when": "fail", "tokens": ["Half", " an"], "error": "scripted failure"},
//       {"when": "long", "tokens": ["word "], "repeat": 400, "token_ms": 5}
//     ],
//     "default": {"tokens": ["Hello", " from", " the", " fake", " engine", "."]}
//   }
//
// In tokens, "{last_user}" is replaced by the last user message and "{n}" by the number of
// replies generated so far (1 for the first), so regenerated replies differ.
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <QVector>

namespace arbor::app {

struct FakeReply {
    QString when;               // substring of the last user message; empty matches anything
    QStringList tokens;         // one entry per token
    int repeat = 1;             // the token list is produced this many times
    int tokenMs = -1;           // -1: the script's token_ms
    QString error;              // non-empty: fail with this after the tokens
    QString stopReason = QStringLiteral("eog");
};

struct FakeScript {
    QString modelName = QStringLiteral("Fake model");
    QString architecture = QStringLiteral("llama");
    QString backend = QStringLiteral("fake");
    QString device = QStringLiteral("scripted");
    int contextLength = 4096;
    bool thinking = false;
    int tokenMs = 20;
    int prefillMs = 0;
    int loadMs = 0;
    QString loadError;
    QVector<FakeReply> replies;
    FakeReply fallback;

    // Parses a script; `source` names it in errors, which name the field that is wrong.
    static bool parse(const QByteArray& json, const QString& source, FakeScript* out, QString* why);
    static bool load(const QString& path, FakeScript* out, QString* why);

    // The reply for a conversation whose last user message is `lastUser`.
    const FakeReply& replyFor(const QString& lastUser) const;
};

}  // namespace arbor::app
