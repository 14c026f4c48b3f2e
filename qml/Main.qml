// The main window: sidebar of conversations, the chat area, the status bar, the window-wide
// drop target for models, and the toasts. Keyboard: Ctrl+N new chat, Ctrl+F search, Ctrl+O open
// a model, Esc stop, Ctrl+Up/Down or Alt+Left/Right switch the branch of the last fork.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import Arbor

ApplicationWindow {
    id: window
    objectName: "mainWindow"
    width: 1180
    height: 760
    minimumWidth: 720
    minimumHeight: 480
    visible: true
    title: ChatController.conversationId > 0 ? qsTr("%1 — Arbor").arg(ChatController.conversationTitle) : qsTr("Arbor")

    // Theme: the system's palette, or a fixed light or dark one (Settings, Arbor, Theme).
    readonly property string theme: ChatController.settings.theme
    function shade(dark, light, system) {
        return window.theme === "dark" ? dark : window.theme === "light" ? light : system
    }
    SystemPalette {
        id: systemPalette
    }
    palette.window: shade("#232427", "#f3f3f3", systemPalette.window)
    palette.windowText: shade("#e8e8e8", "#1d1d1d", systemPalette.windowText)
    palette.base: shade("#2b2c30", "#ffffff", systemPalette.base)
    palette.alternateBase: shade("#1e1f22", "#f7f7f7", systemPalette.alternateBase)
    palette.text: shade("#e8e8e8", "#1d1d1d", systemPalette.text)
    palette.button: shade("#34353a", "#ececec", systemPalette.button)
    palette.buttonText: shade("#e8e8e8", "#1d1d1d", systemPalette.buttonText)
    palette.highlight: shade("#3d7bd9", "#2f6fd0", systemPalette.highlight)
    palette.highlightedText: shade("#ffffff", "#ffffff", systemPalette.highlightedText)
    palette.mid: shade("#505257", "#c8c8c8", systemPalette.mid)
    palette.light: shade("#45464b", "#ffffff", systemPalette.light)
    palette.dark: shade("#121315", "#a0a0a0", systemPalette.dark)
    palette.placeholderText: shade("#8d8f94", "#8a8a8a", systemPalette.placeholderText)

    function openModelDialog() {
        openDialog.open()
    }
    function openSettings() {
        settingsDialog.open()
    }
    function showModelDetails(row) {
        detailsDialog.row = row
        detailsDialog.open()
    }

    Shortcut {
        sequence: "Ctrl+N"
        onActivated: ChatController.newChat()
    }
    Shortcut {
        sequence: "Ctrl+F"
        onActivated: sidebar.focusSearch()
    }
    Shortcut {
        sequence: "Ctrl+O"
        onActivated: window.openModelDialog()
    }
    Shortcut {
        sequence: "Esc"
        enabled: ChatController.generating
        onActivated: ChatController.stop()
    }
    Shortcut {
        sequences: ["Ctrl+Up", "Alt+Left"]
        onActivated: ChatController.switchLastBranch(-1)
    }
    Shortcut {
        sequences: ["Ctrl+Down", "Alt+Right"]
        onActivated: ChatController.switchLastBranch(1)
    }
    Shortcut {
        sequence: "Ctrl+,"
        onActivated: window.openSettings()
    }

    FileDialog {
        id: openDialog
        title: qsTr("Open GGUF models")
        fileMode: FileDialog.OpenFiles
        nameFilters: [qsTr("GGUF models (*.gguf)"), qsTr("All files (*)")]
        onAccepted: ChatController.importFiles(selectedFiles)
    }

    SplitView {
        anchors.fill: parent
        anchors.bottomMargin: statusBar.height
        orientation: Qt.Horizontal

        Sidebar {
            id: sidebar
            SplitView.preferredWidth: 280
            SplitView.minimumWidth: 200
        }

        ChatView {
            id: chatView
            SplitView.fillWidth: true
            onOpenModelRequested: window.openModelDialog()
            onSettingsRequested: window.openSettings()
            onDetailsRequested: (row) => window.showModelDetails(row)
        }
    }

    StatusBar {
        id: statusBar
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.bottom: parent.bottom
    }

    Column {
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.bottom: statusBar.top
        anchors.bottomMargin: 96
        spacing: 8
        width: Math.min(parent.width - 40, 560)

        ImportErrors {
            width: parent.width
        }
        UndoToast {
            width: parent.width
        }
    }

    DropOverlay {
        id: dropOverlay
        anchors.fill: parent
    }

    SettingsDialog {
        id: settingsDialog
        anchors.centerIn: parent
    }

    ModelDetails {
        id: detailsDialog
        anchors.centerIn: parent
    }
}
