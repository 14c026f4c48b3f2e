// The QML-facing core of the app: it owns the store thread, the engine worker and the models,
// and turns user actions (send, stop, edit, regenerate, switch branch or conversation, import
// and pick models, delete and undo) into store jobs and engine requests. Nothing here touches
// the database or the engine on the UI thread: writes are store jobs, generation is the
// worker's, and results come back as queued calls.
//
// One instance per run, prepared by runApplication() (or a test) and handed to QML as the
// ChatController singleton. Without a prepared instance, QML gets an inert one: no store, no
// engine, every action refused, which is what the QML skeleton tests see.
#pragma once

#include "chat/EngineWorker.h"
#include "chat/StoreThread.h"
#include "engine/TelemetryFeed.h"
#include "models/ChatPathModel.h"
#include "models/ConversationListModel.h"
#include "models/ModelLibraryModel.h"
#include "models/ReversedListModel.h"
#include "settings/AppSettings.h"

#include <QObject>
#include <QUrl>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

#include <memory>

class QQmlEngine;
class QJSEngine;

namespace arbor::app {

class ChatBackend;

struct ControllerOptions {
    QString dataDir;              // database, settings.ini, park files
    QString fakeScriptPath;       // non-empty: drive the UI with FakeChatBackend
    QString demoModelPath;        // the bundled model ("Try the demo model", --demo)
    bool demo = false;            // select the demo model at start
    QStringList importFiles;      // GGUF files named on the command line
    bool telemetry = true;        // run the telemetry sampler
    int batchIntervalMs = 16;
    int checkpointIntervalMs = 1000;
};

class ChatController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    Q_PROPERTY(arbor::app::ConversationListModel* conversations READ conversations CONSTANT)
    Q_PROPERTY(arbor::app::ChatPathModel* messages READ messages CONSTANT)
    // The same rows newest first, for the chat view's bottom-to-top list.
    Q_PROPERTY(arbor::app::ReversedListModel* messagesNewestFirst READ messagesNewestFirst CONSTANT)
    Q_PROPERTY(arbor::app::ModelLibraryModel* library READ library CONSTANT)
    Q_PROPERTY(arbor::app::AppSettings* settings READ settings CONSTANT)
    Q_PROPERTY(arbor::app::TelemetryFeed* telemetry READ telemetry CONSTANT)
    Q_PROPERTY(bool ready READ ready CONSTANT)
    Q_PROPERTY(bool fakeEngine READ fakeEngine CONSTANT)
    Q_PROPERTY(bool demoAvailable READ demoAvailable CONSTANT)
    // Ids are numbers in QML (double: exact up to 2^53; qint64 has no QML type in Qt 6.4).
    Q_PROPERTY(double conversationId READ conversationIdForQml NOTIFY conversationChanged)
    Q_PROPERTY(QString conversationTitle READ conversationTitle NOTIFY conversationChanged)
    Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
    Q_PROPERTY(QString modelState READ modelState NOTIFY modelChanged)  // none, loading, ready, error
    Q_PROPERTY(bool modelLoaded READ modelLoaded NOTIFY modelChanged)
    Q_PROPERTY(QString modelPath READ modelPath NOTIFY modelChanged)
    Q_PROPERTY(QString modelName READ modelName NOTIFY modelChanged)
    Q_PROPERTY(QString modelError READ modelError NOTIFY modelChanged)
    Q_PROPERTY(QString modelSummary READ modelSummary NOTIFY modelChanged)  // "llama · Q8_0 · 1.1 MB · 512 ctx"
    Q_PROPERTY(QString composerHint READ composerHint NOTIFY modelChanged)
    Q_PROPERTY(QString backendText READ backendText NOTIFY modelChanged)
    Q_PROPERTY(QString gpuNote READ gpuNote NOTIFY modelChanged)
    Q_PROPERTY(bool thinkingSupported READ thinkingSupported NOTIFY modelChanged)
    Q_PROPERTY(double decodeTokS READ decodeTokS NOTIFY statsChanged)
    Q_PROPERTY(double prefillTokS READ prefillTokS NOTIFY statsChanged)
    Q_PROPERTY(double ttftMs READ ttftMs NOTIFY statsChanged)
    Q_PROPERTY(int contextUsed READ contextUsed NOTIFY statsChanged)
    Q_PROPERTY(int contextLength READ contextLength NOTIFY statsChanged)
    // What the last conversation switch did with the engine's context: "woke 412 cells from
    // disk", "re-read 380 tokens (park file: checksum mismatch …)"; empty before any.
    Q_PROPERTY(QString contextNote READ contextNote NOTIFY statsChanged)
    Q_PROPERTY(QString notice READ notice NOTIFY noticeChanged)
    Q_PROPERTY(QString undoTitle READ undoTitle NOTIFY undoChanged)

public:
    // Inert until start(). No default argument on purpose: Qt 6.4 builds a QML singleton with
    // the default constructor whenever there is one, and would then never call create().
    explicit ChatController(QObject* parent);
    ~ChatController() override;

    // Opens the store, starts the engine worker (fake or real) and the telemetry, loads the
    // library and the conversation list. False with `why` when the database cannot be opened.
    bool start(const ControllerOptions& options, QString* why);
    void shutdown();

    static ChatController* create(QQmlEngine*, QJSEngine*);
    static void setInstance(ChatController* c);

    ConversationListModel* conversations() { return &m_conversations; }
    ChatPathModel* messages() { return &m_path; }
    ReversedListModel* messagesNewestFirst() { return &m_newestFirst; }
    ModelLibraryModel* library() { return &m_library; }
    AppSettings* settings() { return m_settings.get(); }
    TelemetryFeed* telemetry() { return &m_telemetry; }
    bool ready() const { return m_store.isOpen(); }
    bool fakeEngine() const { return !m_options.fakeScriptPath.isEmpty(); }
    bool demoAvailable() const;

    qint64 conversationId() const { return m_conversationId; }
    double conversationIdForQml() const { return double(m_conversationId); }
    QString conversationTitle() const;
    bool generating() const { return m_generating; }
    QString modelState() const { return m_modelState; }
    bool modelLoaded() const { return m_modelState == QLatin1String("ready"); }
    QString modelPath() const { return m_modelPath; }
    QString modelName() const { return m_info.modelName; }
    QString modelError() const { return m_modelError; }
    QString modelSummary() const;
    QString composerHint() const;
    QString backendText() const;
    QString gpuNote() const { return m_info.gpuNote; }
    bool thinkingSupported() const { return m_info.thinkingSupported; }
    double decodeTokS() const { return m_decodeTokS; }
    double prefillTokS() const { return m_prefillTokS; }
    double ttftMs() const { return m_ttftMs; }
    int contextUsed() const { return m_contextUsed; }
    int contextLength() const { return m_contextLength; }
    QString contextNote() const { return m_contextNote; }
    ContextSwitch lastContextSwitch() const { return m_lastSwitch; }
    QString notice() const { return m_notice; }
    QString undoTitle() const { return m_undo.title; }

    // Chat.
    Q_INVOKABLE void newChat();
    Q_INVOKABLE void openConversation(qint64 id);
    Q_INVOKABLE bool send(const QString& text);
    Q_INVOKABLE void stop();
    Q_INVOKABLE void editMessage(int row, const QString& text) { m_path.editMessage(row, text); }
    Q_INVOKABLE void regenerate(int row) { m_path.regenerate(row); }
    Q_INVOKABLE void switchSibling(int row, int delta) { m_path.switchSibling(row, delta); }
    // Switches the branch of the last message that has siblings (keyboard).
    Q_INVOKABLE void switchLastBranch(int delta);
    Q_INVOKABLE void dismissNotice();

    // Conversations.
    Q_INVOKABLE void renameConversation(qint64 id, const QString& title);
    Q_INVOKABLE void setPinned(qint64 id, bool pinned);
    Q_INVOKABLE void deleteConversation(qint64 id);
    Q_INVOKABLE void undoDelete();
    Q_INVOKABLE void dropUndo();
    Q_INVOKABLE void setSearch(const QString& text) { m_conversations.setSearch(text); }
    // The open conversation's system prompt and sampler settings ({systemPrompt, temperature,
    // topK, topP, minP, maxTokens, seed, enableThinking}); a new chat keeps them until it is created.
    Q_INVOKABLE QVariant conversationSettings() const;  // a map; QVariant keeps qmllint's types loose
    Q_INVOKABLE void saveConversationSettings(const QVariantMap& settings);
    Q_INVOKABLE void exportMarkdown(const QUrl& file);

    // Models.
    Q_INVOKABLE void importFiles(const QList<QUrl>& urls);
    Q_INVOKABLE void selectModel(const QString& path);
    Q_INVOKABLE void useDemoModel();
    Q_INVOKABLE void copyText(const QString& text);

    // For tests and benchmarks.
    StoreThread* store() { return &m_store; }
    EngineWorker* worker() { return m_worker.get(); }
    qint64 streamingReplyId() const { return m_streamingReply; }

signals:
    void conversationChanged();
    void generatingChanged();
    void modelChanged();
    void statsChanged();
    void noticeChanged();
    void undoChanged();
    // A reply has been committed to the database (state: complete, interrupted or error).
    void replyFinished(qint64 replyId, const QString& state);
    // The open conversation's path has been (re)applied to `messages`.
    void pathShown();
    void sendFailed(const QString& why);

private:
    struct Prepared;
    // Commits the user message (when `userText` is set) and a streaming reply, then generates.
    void prepareAndGenerate(qint64 conversationId, qint64 parentId, const QString& userText, qint64 regenerateFrom);
    void startGeneration(const Prepared& p);
    void setGenerating(bool g);
    void setNotice(const QString& n);
    void setConversation(qint64 id, const ConversationRow& row);
    struct Opened;
    // Loads the conversation's row and its context's turns on the store thread, then loads
    // its model (when another one) and has the worker wake its context.
    void loadConversation(qint64 id);
    void onConversationLoaded(const Opened& o);
    void loadModel(const QString& path);
    void onContextSwitched(const ContextSwitch& report);
    void onProgress(const ReplyProgress& p);
    void onFinished(const ReplyResult& r);
    void onPathApplied();

    ControllerOptions m_options;
    std::unique_ptr<AppSettings> m_settings;
    StoreThread m_store;
    std::unique_ptr<EngineWorker> m_worker;
    ConversationListModel m_conversations;
    ChatPathModel m_path;
    ReversedListModel m_newestFirst;
    ModelLibraryModel m_library;
    TelemetryFeed m_telemetry;

    qint64 m_conversationId = 0;
    ConversationRow m_conversation;  // id 0: the draft of a new chat
    bool m_generating = false;
    qint64 m_streamingReply = 0;
    QString m_liveContent, m_liveReasoning;  // the streaming reply so far
    QString m_modelState = QStringLiteral("none");
    QString m_modelPath, m_modelError;
    BackendInfo m_info;
    double m_decodeTokS = 0, m_prefillTokS = 0, m_ttftMs = 0;
    int m_contextUsed = 0, m_contextLength = 0;
    QString m_notice;
    QString m_contextNote;
    ContextSwitch m_lastSwitch;
    struct Undo {
        qint64 id = 0;
        QString title;
    } m_undo;
    bool m_selectNextImport = false;
};

}  // namespace arbor::app
