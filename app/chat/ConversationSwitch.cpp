// ChatController: opening a conversation. Its row and the turns of its active path are read
// on the store thread; then its own model is loaded when another one is (a missing file is
// reported in the model state, not loaded), and the engine worker is asked to wake the
// conversation's parked context in the background. The UI thread only queues and applies.
#include "chat/ChatController.h"

#include "chat/ConversationTurns.h"
#include "store/ModelRecords.h"

#include <QFileInfo>

namespace arbor::app {

struct ChatController::Opened {
    qint64 id = 0;
    bool found = false;
    ConversationRow row;
    qint64 leafId = 0;          // the last message of the active path
    QVector<ChatTurn> turns;    // up to it
    bool modelMissing = false;  // the conversation's model file is gone
    QString fingerprintNow;     // of the file at its model path (when it has a stored one)
};

void ChatController::openConversation(qint64 id) {
    if (id == m_conversationId) return;
    if (id <= 0) return newChat();
    ConversationRow placeholder;
    const int row = m_conversations.rowOf(id);
    if (row >= 0) placeholder = m_conversations.rows()[row];
    setConversation(id, placeholder);  // the list's copy, until the store's arrives
    m_path.open(id);
    loadConversation(id);
    setNotice({});
}

void ChatController::loadConversation(qint64 id) {
    m_store.query(
        [id](StoreContext& s) {
            Opened o;
            o.id = id;
            o.found = s.chats.conversation(id, &o.row);
            if (!o.found) return o;
            const QVector<MessageRow> path = s.chats.activePath(id);
            o.leafId = path.isEmpty() ? 0 : path.back().id;
            if (o.leafId) o.turns = turnsUpTo(s, o.row, o.leafId);
            if (!o.row.modelPath.isEmpty()) {
                o.modelMissing = !QFileInfo::exists(o.row.modelPath);
                if (!o.modelMissing && !o.row.modelFingerprint.isEmpty()) o.fingerprintNow = modelFingerprint(o.row.modelPath, nullptr);
            }
            return o;
        },
        this, [this](Opened o) { onConversationLoaded(o); });
}

void ChatController::onConversationLoaded(const Opened& o) {
    if (o.id != m_conversationId || !o.found) return;  // the user moved on
    setConversation(o.id, o.row);
    const QString& want = o.row.modelPath;
    if (!want.isEmpty()) {
        if (o.modelMissing) {
            m_modelPath = want;
            m_modelState = QStringLiteral("error");
            m_modelError = tr("this conversation's model %1 is missing (moved or deleted); pick a model to continue it").arg(want);
            m_info = {};
            emit modelChanged();
            return;  // nothing to wake the context with
        }
        const bool current = want == m_modelPath && (m_modelState == QLatin1String("ready") || m_modelState == QLatin1String("loading"));
        if (!current) loadModel(want);
        if (!o.fingerprintNow.isEmpty() && o.fingerprintNow != o.row.modelFingerprint)
            setNotice(tr("%1 is not the file this conversation was written with (it changed since); replies may differ.")
                          .arg(QFileInfo(want).fileName()));
    }
    if (m_worker && o.leafId && (m_modelState == QLatin1String("ready") || m_modelState == QLatin1String("loading")))
        m_worker->requestActivate(o.id, o.leafId, o.turns, paramsFrom(o.row.samplerJson));
}

void ChatController::loadModel(const QString& path) {
    m_modelPath = path;
    m_modelState = QStringLiteral("loading");
    m_modelError.clear();
    emit modelChanged();
    m_worker->requestLoad(path);
}

void ChatController::selectModel(const QString& path) {
    if (!m_worker || path.isEmpty()) return;
    m_settings->setDefaultModel(path);
    loadModel(path);
    // The open conversation continues with this model from now on.
    const qint64 id = m_conversationId;
    if (id > 0 && ready() && path != m_conversation.modelPath) {
        m_conversation.modelPath = path;
        m_store.post([id, path](StoreContext& s) { s.chats.setModel(id, path, modelFingerprint(path, nullptr)); });
    }
}

void ChatController::onContextSwitched(const ContextSwitch& r) {
    m_lastSwitch = r;
    if (r.restoredCells > 0)
        m_contextNote = tr("context woken from disk: %n cell(s)", nullptr, r.restoredCells);
    else if (!r.problem.isEmpty())
        m_contextNote = tr("context recomputed (%n token(s)): %1", nullptr, r.recomputedCells).arg(r.problem);
    else if (r.recomputedCells > 0)
        m_contextNote = tr("context recomputed: %n token(s)", nullptr, r.recomputedCells);
    else
        m_contextNote.clear();
    emit statsChanged();
}

}  // namespace arbor::app
