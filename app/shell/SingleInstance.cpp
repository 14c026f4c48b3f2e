#include "shell/SingleInstance.h"

#include <QCryptographicHash>
#include <QDataStream>
#include <QDeadlineTimer>
#include <QDir>
#include <QFileInfo>
#include <QLocalSocket>
#include <QThread>
#include <QTimer>
#include <QWindow>
#include <QtEndian>

#include <unistd.h>

namespace arbor::app {
namespace {

constexpr quint32 kMagic = 0x41524231;  // "ARB1"
constexpr char kAck = 'k';
constexpr int kMaxFiles = 4096;
// A sun_path holds 108 bytes with its terminator; keep well inside it.
constexpr int kMaxSocketPath = 100;

QString canonicalDir(const QString& dataDir) {
    const QString c = QFileInfo(dataDir).canonicalFilePath();
    return c.isEmpty() ? QDir(dataDir).absolutePath() : c;
}

enum class Sent { NotConnected, NoAnswer, Done };

}  // namespace

SingleInstance::SingleInstance(const QString& dataDir, QObject* parent)
    : QObject(parent), m_dataDir(dataDir), m_socketPath(socketPath(dataDir)) {
    connect(&m_server, &QLocalServer::newConnection, this, [this] {
        while (QLocalSocket* s = m_server.nextPendingConnection()) serve(s);
    });
}

SingleInstance::~SingleInstance() {
    if (m_server.isListening()) m_server.close();  // removes the socket file
}

QString SingleInstance::socketPath(const QString& dataDir) {
    const QByteArray key =
        QCryptographicHash::hash(canonicalDir(dataDir).toUtf8(), QCryptographicHash::Sha256).toHex().left(24);
    const QString name = QStringLiteral("arbor-%1-%2.socket").arg(::getuid()).arg(QString::fromLatin1(key));
    for (const QString& dir : {qEnvironmentVariable("XDG_RUNTIME_DIR"), QDir::tempPath()}) {
        if (!dir.isEmpty() && QFileInfo(dir).isDir() && dir.size() + 1 + name.size() <= kMaxSocketPath)
            return dir + QLatin1Char('/') + name;
    }
    return QStringLiteral("/tmp/") + name;
}

QString SingleInstance::lockPath(const QString& dataDir) {
    return canonicalDir(dataDir) + QStringLiteral("/instance.lock");
}

SingleInstance::Role SingleInstance::claim(const Request& request, QString* why, int waitMs) {
    m_lock = std::make_unique<QLockFile>(lockPath(m_dataDir));
    m_lock->setStaleLockTime(0);  // held for the whole run: stale only once its process is gone
    if (m_lock->tryLock(0)) {
        QLocalServer::removeServer(m_socketPath);  // left by a run that crashed; the lock is ours
        m_server.setSocketOptions(QLocalServer::UserAccessOption);
        if (!m_server.listen(m_socketPath) && why)
            *why = QStringLiteral("cannot listen on %1: %2").arg(m_socketPath, m_server.errorString());
        return Role::Primary;
    }
    const bool heldByOther = m_lock->error() == QLockFile::LockFailedError;
    m_lock.reset();
    if (!heldByOther) {
        if (why) *why = QStringLiteral("cannot create the lock file %1").arg(lockPath(m_dataDir));
        return Role::Standalone;
    }

    // Another Arbor holds this data folder. It may still be starting up: retry until it listens.
    Request r = request;
    if (r.activationToken.isEmpty()) r.activationToken = qgetenv("XDG_ACTIVATION_TOKEN");
    const QByteArray frame = encode(r);
    QDeadlineTimer deadline(waitMs);
    QString last;
    for (;;) {
        QLocalSocket s;
        s.connectToServer(m_socketPath);
        if (s.waitForConnected(1000)) {
            s.write(frame);
            bool answered = s.waitForBytesWritten(2000);
            while (answered && s.bytesAvailable() < 1) answered = s.waitForReadyRead(10000);
            char c = 0;
            if (answered && s.getChar(&c) && c == kAck) return Role::HandedOff;
            if (why)
                *why = QStringLiteral("the running Arbor for %1 took the connection but did not answer (%2)")
                           .arg(m_dataDir, s.errorString());
            return Role::Standalone;
        }
        last = s.errorString();
        if (deadline.hasExpired()) break;
        QThread::msleep(100);
    }
    if (why) *why = QStringLiteral("the running Arbor for %1 does not listen on %2 (%3)").arg(m_dataDir, m_socketPath, last);
    return Role::Standalone;
}

void SingleInstance::serve(QLocalSocket* socket) {
    connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
    // A peer that connects and says nothing is dropped after a while.
    QTimer::singleShot(5000, socket, [socket] { socket->abort(); });
    auto buffer = std::make_shared<QByteArray>();
    connect(socket, &QLocalSocket::readyRead, this, [this, socket, buffer] {
        buffer->append(socket->readAll());
        if (buffer->size() < 4) return;
        const quint32 n = qFromBigEndian<quint32>(buffer->constData());
        if (n > quint32(kMaxMessage)) {
            qWarning("arbor: ignored a hand-off of %u bytes (at most %d)", n, kMaxMessage);
            socket->abort();
            return;
        }
        if (buffer->size() < qsizetype(4 + n)) return;
        Request r;
        QString why;
        if (!decode(buffer->mid(4, n), &r, &why)) {
            qWarning("arbor: ignored a hand-off: %s", qPrintable(why));
            socket->abort();
            return;
        }
        buffer->clear();
        emit requestReceived(r);
        socket->write(&kAck, 1);
        socket->flush();
        socket->disconnectFromServer();
    });
}

QByteArray SingleInstance::encode(const Request& request) {
    QByteArray payload;
    QDataStream out(&payload, QIODevice::WriteOnly);
    out.setVersion(QDataStream::Qt_6_4);
    out << kMagic << quint32(request.files.size());
    for (const QString& f : request.files) out << QFileInfo(f).absoluteFilePath();
    out << request.newChat << request.activationToken;
    QByteArray frame(4, '\0');
    qToBigEndian<quint32>(quint32(payload.size()), frame.data());
    return frame + payload;
}

bool SingleInstance::decode(const QByteArray& payload, Request* out, QString* why) {
    auto bad = [&](const QString& what) {
        if (why) *why = what;
        return false;
    };
    if (payload.size() > kMaxMessage)
        return bad(QStringLiteral("message of %1 bytes is over the %2-byte limit").arg(payload.size()).arg(kMaxMessage));
    QDataStream in(payload);
    in.setVersion(QDataStream::Qt_6_4);
    quint32 magic = 0, count = 0;
    in >> magic >> count;
    if (in.status() != QDataStream::Ok || magic != kMagic) return bad(QStringLiteral("not an Arbor hand-off (bad magic at byte 0)"));
    if (count > quint32(kMaxFiles)) return bad(QStringLiteral("file count %1 at byte 4 is over %2").arg(count).arg(kMaxFiles));
    Request r;
    for (quint32 i = 0; i < count; ++i) {
        const qint64 at = in.device()->pos();
        QString f;
        in >> f;
        if (in.status() != QDataStream::Ok) return bad(QStringLiteral("file %1 at byte %2 is truncated").arg(i).arg(at));
        if (f.isEmpty() || QDir::isRelativePath(f))
            return bad(QStringLiteral("file %1 at byte %2 is not an absolute path: '%3'").arg(i).arg(at).arg(f));
        r.files << f;
    }
    const qint64 at = in.device()->pos();
    in >> r.newChat >> r.activationToken;
    if (in.status() != QDataStream::Ok) return bad(QStringLiteral("flags at byte %1 are truncated").arg(at));
    if (!in.atEnd())
        return bad(QStringLiteral("%1 unexpected bytes after byte %2").arg(payload.size() - in.device()->pos()).arg(in.device()->pos()));
    *out = r;
    return true;
}

void SingleInstance::raiseWindow(QWindow* window, const QByteArray& activationToken) {
    if (!window) return;
    // Qt's Wayland plugin activates the window with this token (xdg-activation), then drops it.
    if (!activationToken.isEmpty()) qputenv("XDG_ACTIVATION_TOKEN", activationToken);
    if (window->windowStates() & Qt::WindowMinimized) window->setWindowStates(window->windowStates() & ~Qt::WindowMinimized);
    window->show();
    window->raise();
    window->requestActivate();
}

}  // namespace arbor::app
