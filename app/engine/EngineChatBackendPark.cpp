// EngineChatBackend's context to a park file and back (arbor/park.hpp), for switching
// conversations without recomputing their cells.
#include "engine/EngineChatBackend.h"

#include <arbor/park.hpp>

#include <QFileInfo>

namespace arbor::app {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

bool EngineChatBackend::parkContext(const QString& path, ContextPark* out) {
    if (!m_model || !m_seq) {
        out->why = QStringLiteral("no model is loaded");
        return false;
    }
    if (m_seq->size() != int64_t(m_tokens.size())) {  // never expected: the two move together
        out->why = QStringLiteral("the context holds %1 cells for %2 tokens").arg(m_seq->size()).arg(m_tokens.size());
        return false;
    }
    ParkContents c;
    c.tokens = m_tokens;
    // The logits of the last token when this pass made them; else zeros (generate() always
    // feeds at least one token again, so they are never sampled from).
    const int64_t nVocab = m_model->config().n_vocab;
    if (m_logitsFor == m_tokens.size() && !m_tokens.empty() && m_pass.n_vocab == nVocab && m_pass.size() > 0)
        c.logits.assign(m_pass.row(0), m_pass.row(0) + nVocab);
    else
        c.logits.assign(size_t(nVocab), 0.0f);
    if (auto st = write_park_file(path.toStdString(), *m_model, *m_seq, c); !st) {
        out->why = q(st.message());
        return false;
    }
    out->cells = int(m_tokens.size());
    out->bytes = QFileInfo(path).size();
    return true;
}

ContextWake EngineChatBackend::wakeContext(const QString& path, const QVector<ChatTurn>& turns, const GenerationParams& params,
                                           bool prefill, const std::atomic<bool>& preempt) {
    ContextWake w;
    if (!m_model || !m_seq) {
        w.problem = QStringLiteral("no model is loaded");
        return w;
    }
    m_seq->truncate(0);
    m_tokens.clear();
    m_logitsFor = 0;

    // The conversation so far, as the next prompt will start.
    QString why;
    std::optional<std::vector<TokenId>> expected;
    if (!turns.isEmpty()) expected = tokenize(turns, params, nullptr, &why, false);

    if (!path.isEmpty()) {
        auto r = read_park_file(path.toStdString(), *m_model, m_kvType, *m_seq);
        if (!r) {
            const QString msg = q(r.message());
            w.problem = msg.contains(path) ? msg : QStringLiteral("%1: %2").arg(path, msg);
        } else if (!r.value().cells_restored) {
            w.parkedCells = int(r.value().contents.tokens.size());
            w.problem = QStringLiteral("%1: %2").arg(path, q(r.value().problem));
        } else {
            ParkRead& pr = r.value();
            w.parkedCells = int(pr.contents.tokens.size());
            size_t common = 0;
            if (expected)
                while (common < pr.contents.tokens.size() && common < expected->size() && pr.contents.tokens[common] == (*expected)[common])
                    ++common;
            if (expected && common == 0) {
                // Cells of some other text (the path changed under it): useless here.
                m_seq->truncate(0);
                w.problem = QStringLiteral("%1: its tokens are not the start of this conversation").arg(path);
            } else {
                // All cells are kept, as an unswitched context keeps them: the next generate()
                // keeps the prefix its prompt shares, exactly as it would have.
                m_tokens = std::move(pr.contents.tokens);
                w.restoredCells = int(pr.cells);
                w.matchedTokens = int(common);
                return w;
            }
        }
    }
    // No usable file: prefill the conversation so far in the background of the switch.
    if (prefill && expected && !expected->empty()) {
        const size_t n = std::min(expected->size(), size_t(std::max<int64_t>(0, m_nCtx - 1)));
        const size_t before = m_tokens.size();
        QString failure;
        feed(*expected, 0, n, preempt, &failure);
        w.recomputedCells = int(m_tokens.size() - before);
        if (!failure.isEmpty()) w.problem += (w.problem.isEmpty() ? QString() : QStringLiteral("; ")) + failure;
    }
    return w;
}

}  // namespace arbor::app
