// The chat area: the active path of the open conversation, and the composer below it.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

Pane {
    id: root
    objectName: "chatView"
    padding: 0

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        ListView {
            id: messages
            objectName: "messageList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: 0

            EmptyState {
                anchors.centerIn: parent
                width: Math.min(parent.width - 40, 520)
                visible: messages.count === 0
            }
        }

        Composer {
            Layout.fillWidth: true
        }
    }
}
