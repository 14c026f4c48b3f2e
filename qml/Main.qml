// The main window: sidebar of conversations, the chat area, the drop target and the status bar.
import QtQuick
import QtQuick.Controls
import Arbor

ApplicationWindow {
    id: window
    objectName: "mainWindow"
    width: 1180
    height: 760
    minimumWidth: 720
    minimumHeight: 480
    visible: true
    title: qsTr("Arbor")

    Shortcut {
        sequence: "Ctrl+F"
        onActivated: sidebar.focusSearch()
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
        }
    }

    StatusBar {
        id: statusBar
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.bottom: parent.bottom
    }

    DropOverlay {
        id: dropOverlay
        anchors.fill: parent
    }
}
