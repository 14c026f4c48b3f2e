// One Arbor per data folder. The first start holds a lock file in the data folder and listens
// on a local socket; a later start with the same data folder hands its request (files to
// import, "new chat") to that one and exits, so opening a .gguf from the file manager lands in
// the window that is already open. Runs with their own --data-dir never meet.
#pragma once

#include <QByteArray>
#include <QLocalServer>
#include <QLockFile>
#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

class QLocalSocket;
class QWindow;

namespace arbor::app {

class SingleInstance : public QObject {
    Q_OBJECT

public:
    // What a later start asks of the running instance.
    struct Request {
        QStringList files;           // absolute paths of GGUF files to import
        bool newChat = false;        // the desktop file's "New Chat" action
        QByteArray activationToken;  // XDG_ACTIVATION_TOKEN of the later start (Wayland focus)
    };

    enum class Role {
        Primary,    // holds the lock and listens; requestReceived() brings later starts
        HandedOff,  // the running instance took the request: exit 0
        Standalone  // no running instance answered in time: run on, without listening
    };

    explicit SingleInstance(const QString& dataDir, QObject* parent = nullptr);
    ~SingleInstance() override;

    // Becomes the primary instance of the data folder, or hands `request` to the running one
    // (waiting up to `waitMs` for it to answer). `why` says what went wrong for Standalone, or
    // why a primary could not listen.
    Role claim(const Request& request, QString* why, int waitMs = 5000);

    // The socket a data folder's instance listens on: in $XDG_RUNTIME_DIR (or the temp folder),
    // named by a hash of the folder's canonical path.
    static QString socketPath(const QString& dataDir);
    static QString lockPath(const QString& dataDir);

    // The wire format: a 4-byte big-endian length, then the request as QDataStream. decode()
    // refuses anything malformed or over kMaxMessage bytes with a reason.
    static constexpr int kMaxMessage = 1 << 20;
    static QByteArray encode(const Request& request);
    static bool decode(const QByteArray& payload, Request* out, QString* why);

    // Brings `window` to the front, using the later start's activation token where there is one.
    static void raiseWindow(QWindow* window, const QByteArray& activationToken);

signals:
    void requestReceived(const arbor::app::SingleInstance::Request& request);

private:
    bool sendTo(const QByteArray& frame, QString* why) const;
    void serve(QLocalSocket* socket);

    QString m_dataDir;
    QString m_socketPath;
    std::unique_ptr<QLockFile> m_lock;
    QLocalServer m_server;
};

}  // namespace arbor::app
