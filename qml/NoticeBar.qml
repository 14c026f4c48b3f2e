// A one-line notice above the messages: context overflow, a failed reply, a recovered crash.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

Pane {
    id: root
    objectName: "noticeBar"
    visible: ChatController.notice.length > 0
    padding: 8
    background: Rectangle {
        color: Qt.rgba(0.95, 0.7, 0.1, 0.18)
        border.color: Qt.rgba(0.85, 0.6, 0.1, 0.6)
    }

    RowLayout {
        anchors.fill: parent
        Label {
            objectName: "noticeText"
            Layout.fillWidth: true
            text: ChatController.notice
            wrapMode: Text.WordWrap
        }
        ToolButton {
            objectName: "dismissNotice"
            text: "✕"
            Accessible.name: qsTr("Dismiss the notice")
            onClicked: ChatController.dismissNotice()
        }
    }
}
