// After a delete: "Deleted “title”" with Undo, until dismissed or the app quits (then the
// conversation is purged).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

Pane {
    id: root
    objectName: "undoToast"
    visible: ChatController.undoTitle.length > 0
    padding: 10
    background: Rectangle {
        radius: 8
        color: Qt.rgba(0.15, 0.15, 0.17, 0.92)
    }

    Timer {
        interval: 15000
        running: root.visible
        onTriggered: ChatController.dropUndo()
    }

    RowLayout {
        anchors.fill: parent
        Label {
            Layout.fillWidth: true
            color: "white"
            elide: Text.ElideRight
            text: qsTr("Deleted “%1”").arg(ChatController.undoTitle)
        }
        Button {
            objectName: "undoButton"
            text: qsTr("Undo")
            Accessible.name: qsTr("Undo the delete")
            onClicked: ChatController.undoDelete()
        }
        ToolButton {
            text: "✕"
            Accessible.name: qsTr("Dismiss")
            onClicked: ChatController.dropUndo()
        }
    }
}
