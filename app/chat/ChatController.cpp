#include "chat/ChatController.h"

#include "chat/ConversationTurns.h"

#include "engine/FakeChatBackend.h"
#include "engine/FakeScript.h"
#include "engine/RealBackendFactory.h"
#include "store/ModelRecords.h"

#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QQmlEngine>
#include <QSaveFile>

namespace arbor::app {
namespace {

ChatController* g_prepared = nullptr;  // set by runApplication() or a test before QML starts

QString titleFrom(const QString& text) {
    QString t = text.trimmed().section(QLatin1Char('\n'), 0, 0).simplified();
    if (t.size() > 60) t = t.left(57).trimmed() + QStringLiteral("…");
    return t;
}

}  // namespace

struct ChatController::Prepared {
    QString why;
    qint64 conversationId = 0, userId = 0, replyId = 0;
    ConversationRow row;
    QVector<ChatTurn> turns;
    QVector<MessageRow> path;
};

ChatController::ChatController(QObject* parent) : QObject(parent), m_settings(std::make_unique<AppSettings>()) {
    m_newestFirst.setSourceModel(&m_path);
    connect(&m_path, &ChatPathModel::editRequested, this,
            [this](qint64 id, const QString& text) { prepareAndGenerate(m_conversationId, -id, text, 0); });
    connect(&m_path, &ChatPathModel::regenerateRequested, this,
            [this](qint64 id) { prepareAndGenerate(m_conversationId, 0, {}, id); });
    connect(&m_path, &ChatPathModel::pathApplied, this, &ChatController::onPathApplied);
    connect(&m_path, &ChatPathModel::pathApplied, this, &ChatController::pathShown);
    connect(&m_library, &QAbstractItemModel::modelReset, this, &ChatController::modelChanged);  // the summary
    connect(&m_library, &ModelLibraryModel::importFinished, this, [this](const QStringList& accepted, const QStringList&) {
        if (m_selectNextImport && !accepted.isEmpty()) selectModel(accepted.first());
        if (!accepted.isEmpty()) m_selectNextImport = false;
    });
}

ChatController::~ChatController() { shutdown(); }

void ChatController::shutdown() {
    if (m_worker) m_worker->shutdown();  // a reply in flight is finished as interrupted
    m_store.stop();                      // runs that, purges the deleted conversations
    m_telemetry.stop();
}

void ChatController::setInstance(ChatController* c) { g_prepared = c; }

ChatController* ChatController::create(QQmlEngine*, QJSEngine*) {
    if (g_prepared) {
        QQmlEngine::setObjectOwnership(g_prepared, QQmlEngine::CppOwnership);
        return g_prepared;
    }
    return new ChatController(nullptr);  // inert: the QML skeleton without a store or an engine
}

bool ChatController::demoAvailable() const { return !m_options.demoModelPath.isEmpty() && QFileInfo::exists(m_options.demoModelPath); }

bool ChatController::start(const ControllerOptions& options, QString* why) {
    m_options = options;
    if (!QDir().mkpath(options.dataDir)) {
        *why = tr("cannot create the data folder %1").arg(options.dataDir);
        return false;
    }
    m_settings = std::make_unique<AppSettings>(options.dataDir);
    int recovered = 0;
    if (!m_store.open(options.dataDir + QStringLiteral("/arbor.sqlite"), why, &recovered)) return false;

    std::unique_ptr<ChatBackend> backend;
    if (!options.fakeScriptPath.isEmpty()) {
        FakeScript script;
        if (!FakeScript::load(options.fakeScriptPath, &script, why)) return false;
        backend = std::make_unique<FakeChatBackend>(script);
    } else {
        backend = makeRealBackend(m_settings->backendPreference(), m_settings->threads());
    }
    m_worker = std::make_unique<EngineWorker>(std::move(backend), &m_store);
    m_worker->setBatchIntervalMs(options.batchIntervalMs);
    m_worker->setCheckpointIntervalMs(options.checkpointIntervalMs);
    m_worker->setFlowControl(true);
    m_worker->setParking(options.dataDir + QStringLiteral("/park"), qint64(m_settings->parkBudgetMb()) << 20);
    if (options.telemetry) {
        m_telemetry.start();
        m_worker->setContentionSource(m_telemetry.contentionSource());
    }
    connect(m_worker.get(), &EngineWorker::modelLoading, this, [this](const QString& path) {
        m_modelPath = path;
        m_modelState = QStringLiteral("loading");
        m_modelError.clear();
        emit modelChanged();
    });
    connect(m_worker.get(), &EngineWorker::modelLoaded, this, [this](const BackendInfo& info) {
        m_info = info;
        m_modelPath = info.modelPath;
        m_modelState = QStringLiteral("ready");
        m_contextLength = info.contextLength;
        emit modelChanged();
        emit statsChanged();
    });
    connect(m_worker.get(), &EngineWorker::modelLoadFailed, this, [this](const QString& path, const QString& why) {
        m_modelPath = path;
        m_modelState = QStringLiteral("error");
        m_modelError = why;
        m_info = {};
        emit modelChanged();
    });
    connect(m_worker.get(), &EngineWorker::promptReady, this, [this](qint64, int promptTokens, int contextLength, int dropped) {
        m_contextUsed = promptTokens;
        m_contextLength = contextLength;
        emit statsChanged();
        if (dropped > 0)
            setNotice(tr("This conversation is longer than the model's context: the oldest %n message(s) are left out of "
                         "what the model sees. They stay saved.",
                         nullptr, dropped));
    });
    connect(m_worker.get(), &EngineWorker::replyProgress, this, &ChatController::onProgress);
    connect(m_worker.get(), &EngineWorker::generationFinished, this, &ChatController::onFinished);
    connect(m_worker.get(), &EngineWorker::contextSwitched, this, &ChatController::onContextSwitched);
    m_worker->start();

    m_conversations.setStore(&m_store);
    m_path.setStore(&m_store);
    m_library.setStore(&m_store);
    m_conversations.refresh();
    m_library.refresh();
    if (recovered > 0) setNotice(tr("%n reply(s) were cut off when Arbor last stopped; they are kept and marked interrupted.", nullptr, recovered));

    // The remembered model first; a demo or an accepted import on the command line replaces it.
    const QString def = m_settings->defaultModel();
    if (options.demo && demoAvailable())
        useDemoModel();
    else if (!def.isEmpty() && QFileInfo::exists(def))
        selectModel(def);
    if (!options.importFiles.isEmpty()) {
        m_selectNextImport = true;
        m_library.importPaths(options.importFiles);
    }
    return true;
}

QString ChatController::conversationTitle() const {
    if (m_conversationId == 0) return tr("New chat");
    return m_conversation.title.isEmpty() ? tr("New chat") : m_conversation.title;
}

QString ChatController::composerHint() const {
    if (!ready()) return tr("No database: Arbor started without a data folder");
    if (m_modelState == QLatin1String("loading")) return tr("Loading %1…").arg(QFileInfo(m_modelPath).fileName());
    if (m_modelState == QLatin1String("error")) return tr("The model could not be loaded: %1").arg(m_modelError);
    if (m_modelState != QLatin1String("ready")) return tr("Load a model to start chatting: drop a .gguf file here or press Ctrl+O");
    return {};
}

QString ChatController::modelSummary() const {
    const int row = m_library.rowOfPath(m_modelPath);
    if (row < 0) return {};
    return m_library.data(m_library.index(row), ModelLibraryModel::SummaryTextRole).toString();
}

QString ChatController::backendText() const {
    if (m_modelState != QLatin1String("ready")) return tr("no model loaded");
    return m_info.device.isEmpty() ? m_info.backend : QStringLiteral("%1 · %2").arg(m_info.backend, m_info.device);
}

void ChatController::setGenerating(bool g) {
    if (g == m_generating) return;
    m_generating = g;
    emit generatingChanged();
}

void ChatController::setNotice(const QString& n) {
    if (n == m_notice) return;
    m_notice = n;
    emit noticeChanged();
}

void ChatController::dismissNotice() { setNotice({}); }

void ChatController::setConversation(qint64 id, const ConversationRow& row) {
    m_conversationId = id;
    m_conversation = row;
    emit conversationChanged();
}

void ChatController::newChat() {
    ConversationRow draft;
    draft.samplerJson = QStringLiteral("{}");
    setConversation(0, draft);
    m_path.open(0);
    setNotice({});
}

bool ChatController::send(const QString& text) {
    if (text.trimmed().isEmpty()) return false;
    if (!ready() || !modelLoaded()) {
        emit sendFailed(composerHint());
        return false;
    }
    if (m_generating) {
        emit sendFailed(tr("A reply is still being written; stop it first (Esc)."));
        return false;
    }
    prepareAndGenerate(m_conversationId, m_path.lastMessageId(), text, 0);
    return true;
}

// parentId > 0: the user message goes under it; parentId < 0: it is a sibling of message
// -parentId (an edit); regenerateFrom: a new reply to that user message (or to the parent of
// that assistant message).
void ChatController::prepareAndGenerate(qint64 conversationId, qint64 parentId, const QString& userText, qint64 regenerateFrom) {
    if (!ready() || !modelLoaded() || m_generating) {
        if (m_generating) emit sendFailed(tr("A reply is still being written; stop it first (Esc)."));
        else emit sendFailed(composerHint());
        return;
    }
    setGenerating(true);  // no second request until this one is done
    setNotice({});
    const ConversationRow draft = m_conversation;
    const QString modelPath = m_modelPath;
    m_store.query(
        [=](StoreContext& s) {
            Prepared p;
            qint64 conv = conversationId;
            if (conv == 0) {
                conv = s.chats.createConversation(titleFrom(userText), modelPath, draft.systemPrompt);
                if (conv && !draft.samplerJson.isEmpty()) s.chats.setSamplerJson(conv, draft.samplerJson);
                if (conv && !modelPath.isEmpty()) s.chats.setModel(conv, modelPath, modelFingerprint(modelPath, nullptr));
            }
            if (!conv) {
                p.why = tr("could not create the conversation: %1").arg(s.chats.lastError());
                return p;
            }
            qint64 userId = 0;
            if (regenerateFrom) {
                MessageRow m;
                if (!s.chats.message(regenerateFrom, &m)) {
                    p.why = tr("the message to regenerate is gone");
                    return p;
                }
                userId = m.role == QLatin1String("user") ? m.id : m.parentId;
            } else {
                qint64 parent = parentId;
                if (parentId < 0) {  // an edit: a sibling of the edited message
                    MessageRow edited;
                    if (!s.chats.message(-parentId, &edited)) {
                        p.why = tr("the message to edit is gone");
                        return p;
                    }
                    parent = edited.parentId;
                }
                userId = s.chats.addMessage(conv, parent, QStringLiteral("user"), userText);
            }
            if (!userId) {
                p.why = tr("could not save the message: %1").arg(s.chats.lastError());
                return p;
            }
            p.userId = userId;
            p.replyId = s.chats.beginReply(conv, userId);
            if (!p.replyId) {
                p.why = tr("could not start the reply: %1").arg(s.chats.lastError());
                return p;
            }
            s.chats.conversation(conv, &p.row);
            p.conversationId = conv;
            p.turns = turnsUpTo(s, p.row, userId);
            p.path = s.chats.activePath(conv);
            return p;
        },
        this, [this](Prepared p) {
            if (!p.why.isEmpty()) {
                setGenerating(false);
                setNotice(p.why);
                emit sendFailed(p.why);
                return;
            }
            startGeneration(p);
        });
}

void ChatController::startGeneration(const Prepared& p) {
    if (p.conversationId != m_conversationId) {
        setConversation(p.conversationId, p.row);
        m_path.open(p.conversationId);
    } else {
        m_conversation = p.row;
        emit conversationChanged();
    }
    m_path.applyPath(p.conversationId, p.path);
    m_conversations.refresh();
    m_streamingReply = p.replyId;
    m_liveContent.clear();
    m_liveReasoning.clear();
    m_decodeTokS = 0;
    m_ttftMs = 0;
    emit statsChanged();
    GenerateRequest req;
    req.conversationId = p.conversationId;
    req.parentId = p.userId;
    req.replyId = p.replyId;
    req.turns = p.turns;
    req.params = paramsFrom(p.row.samplerJson);
    req.policy = contextPolicyFromName(m_settings->contextPolicy());
    m_worker->requestGenerate(req);
}

void ChatController::stop() {
    if (m_worker && m_streamingReply) m_worker->cancel(m_streamingReply);
}

void ChatController::onProgress(const ReplyProgress& p) {
    if (p.replyId != m_streamingReply) {
        m_worker->acknowledgeProgress();
        return;
    }
    m_liveContent += p.contentDelta;
    m_liveReasoning += p.reasoningDelta;
    m_path.setLive(p.replyId, m_liveContent, m_liveReasoning);
    m_decodeTokS = p.decodeTokS;
    m_ttftMs = p.ttftMs;
    m_contextUsed = p.contextUsed;
    m_contextLength = p.contextLength;
    emit statsChanged();
    m_worker->acknowledgeProgress();  // ready for the next batch
}

void ChatController::onFinished(const ReplyResult& r) {
    m_path.finishLive(r.replyId, r.content, r.reasoning, r.state, r.stats);
    if (r.replyId == m_streamingReply) m_streamingReply = 0;
    m_decodeTokS = r.stats.decodeTokS;
    m_prefillTokS = r.stats.prefillTokS;
    m_ttftMs = r.stats.ttftMs;
    if (r.contextUsed > 0) m_contextUsed = r.contextUsed;
    m_contextLength = r.contextLength;
    emit statsChanged();
    if (r.state == QLatin1String("error")) setNotice(r.error.isEmpty() ? tr("The reply failed.") : r.error);
    else if (r.stats.stopReason == QLatin1String("context-full"))
        setNotice(tr("The reply stopped because the model's context is full. Older turns will be left out of the next reply."));
    setGenerating(false);
    // The finish was queued to the store before this signal: these reloads see it.
    if (r.conversationId == m_conversationId) m_path.reload();
    m_conversations.refresh();
    const qint64 id = r.replyId;
    const QString state = r.state;
    m_store.query([](StoreContext&) { return 0; }, this, [this, id, state](int) { emit replyFinished(id, state); });
}

void ChatController::onPathApplied() {
    if (m_generating) return;
    for (int i = int(m_path.rows().size()) - 1; i >= 0; --i) {
        const MessageRow& m = m_path.rows()[i];
        if (m.role != QLatin1String("assistant")) continue;
        m_decodeTokS = m.stats.decodeTokS;
        m_prefillTokS = m.stats.prefillTokS;
        m_ttftMs = m.stats.ttftMs;
        emit statsChanged();
        break;
    }
}

void ChatController::switchLastBranch(int delta) {
    const int row = m_path.lastBranchRow();
    if (row >= 0) m_path.switchSibling(row, delta);
}

void ChatController::renameConversation(qint64 id, const QString& title) {
    if (!ready() || title.trimmed().isEmpty()) return;
    const QString t = title.trimmed();
    m_store.post([id, t](StoreContext& s) { s.chats.renameConversation(id, t); });
    if (id == m_conversationId) {
        m_conversation.title = t;
        emit conversationChanged();
    }
    m_conversations.refresh();
}

void ChatController::setPinned(qint64 id, bool pinned) {
    if (!ready()) return;
    m_store.post([id, pinned](StoreContext& s) { s.chats.setPinned(id, pinned); });
    m_conversations.refresh();
}

void ChatController::deleteConversation(qint64 id) {
    if (!ready() || id <= 0) return;
    if (m_generating && id == m_conversationId) stop();
    const int row = m_conversations.rowOf(id);
    m_undo = {id, row >= 0 ? m_conversations.rows()[row].title : QString()};
    if (m_undo.title.isEmpty()) m_undo.title = tr("New chat");
    emit undoChanged();
    m_store.post([id](StoreContext& s) { s.chats.softDelete(id); });
    if (id == m_conversationId) newChat();
    m_conversations.refresh();
}

void ChatController::undoDelete() {
    if (!m_undo.id) return;
    const qint64 id = m_undo.id;
    m_undo = {};
    emit undoChanged();
    m_store.post([id](StoreContext& s) { s.chats.undoDelete(id); });
    m_conversations.refresh();
    openConversation(id);
}

void ChatController::dropUndo() {
    if (!m_undo.id) return;
    m_undo = {};
    emit undoChanged();
}

QVariant ChatController::conversationSettings() const {
    const QJsonObject o = QJsonDocument::fromJson(m_conversation.samplerJson.toUtf8()).object();
    const GenerationParams d;
    QVariantMap m;
    m[QStringLiteral("systemPrompt")] = m_conversation.systemPrompt;
    m[QStringLiteral("temperature")] = o.value(QLatin1String("temperature")).toDouble(d.temperature);
    m[QStringLiteral("topK")] = o.value(QLatin1String("top_k")).toInt(d.topK);
    m[QStringLiteral("topP")] = o.value(QLatin1String("top_p")).toDouble(d.topP);
    m[QStringLiteral("minP")] = o.value(QLatin1String("min_p")).toDouble(d.minP);
    m[QStringLiteral("maxTokens")] = o.value(QLatin1String("max_tokens")).toInt(d.maxTokens);
    m[QStringLiteral("seed")] = o.value(QLatin1String("seed")).toInt(-1);
    m[QStringLiteral("enableThinking")] = o.value(QLatin1String("enable_thinking")).toBool(d.enableThinking);
    return m;
}

void ChatController::saveConversationSettings(const QVariantMap& in) {
    QJsonObject o;
    o[QStringLiteral("temperature")] = qBound(0.0, in.value(QStringLiteral("temperature"), 0.8).toDouble(), 5.0);
    o[QStringLiteral("top_k")] = qBound(0, in.value(QStringLiteral("topK"), 40).toInt(), 100000);
    o[QStringLiteral("top_p")] = qBound(0.0, in.value(QStringLiteral("topP"), 0.95).toDouble(), 1.0);
    o[QStringLiteral("min_p")] = qBound(0.0, in.value(QStringLiteral("minP"), 0.05).toDouble(), 1.0);
    o[QStringLiteral("max_tokens")] = qBound(1, in.value(QStringLiteral("maxTokens"), 512).toInt(), 1 << 20);
    const int seed = in.value(QStringLiteral("seed"), -1).toInt();
    if (seed >= 0) o[QStringLiteral("seed")] = seed;
    o[QStringLiteral("enable_thinking")] = in.value(QStringLiteral("enableThinking"), true).toBool();
    const QString json = QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact));
    const QString prompt = in.value(QStringLiteral("systemPrompt")).toString();
    m_conversation.samplerJson = json;
    m_conversation.systemPrompt = prompt;
    emit conversationChanged();
    const qint64 id = m_conversationId;
    if (id && ready())
        m_store.post([id, json, prompt](StoreContext& s) {
            s.chats.setSamplerJson(id, json);
            s.chats.setSystemPrompt(id, prompt);
        });
}

void ChatController::exportMarkdown(const QUrl& file) {
    const qint64 id = m_conversationId;
    if (!id || !ready()) return;
    const QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
    m_store.query(
        [id, path](StoreContext& s) {
            QSaveFile f(path);
            if (!f.open(QIODevice::WriteOnly)) return tr("Cannot write %1: %2").arg(path, f.errorString());
            f.write(s.chats.exportMarkdown(id).toUtf8());
            return f.commit() ? tr("Saved %1").arg(QFileInfo(path).fileName()) : tr("Cannot write %1: %2").arg(path, f.errorString());
        },
        this, [this](QString msg) { setNotice(msg); });
}

void ChatController::importFiles(const QList<QUrl>& urls) {
    m_selectNextImport = true;
    m_library.importFiles(urls);
}

void ChatController::useDemoModel() {
    if (!demoAvailable() || !ready()) {
        setNotice(tr("The demo model is not installed (%1).").arg(m_options.demoModelPath));
        return;
    }
    m_selectNextImport = true;
    m_library.importPaths({m_options.demoModelPath});
}

void ChatController::copyText(const QString& text) {
    if (auto* app = qobject_cast<QGuiApplication*>(QCoreApplication::instance())) app->clipboard()->setText(text);
}

}  // namespace arbor::app
