// Conversations: search as you type, new chat, and the list grouped by recency.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Pane {
    id: root
    objectName: "sidebar"
    padding: 10

    function focusSearch() {
        search.forceActiveFocus()
    }

    background: Rectangle {
        color: palette.alternateBase
        Rectangle {
            anchors.right: parent.right
            width: 1
            height: parent.height
            color: palette.mid
        }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 8

        RowLayout {
            Layout.fillWidth: true
            Label {
                text: qsTr("Arbor")
                font.pixelSize: 20
                font.bold: true
                Layout.fillWidth: true
            }
            Button {
                objectName: "newChatButton"
                text: qsTr("New chat")
                icon.name: "document-new"
                Accessible.name: qsTr("Start a new chat")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("New chat (Ctrl+N)")
            }
        }

        TextField {
            id: search
            objectName: "conversationSearch"
            Layout.fillWidth: true
            placeholderText: qsTr("Search chats (Ctrl+F)")
            Accessible.name: qsTr("Search conversations")
        }

        ListView {
            id: list
            objectName: "conversationList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: 0
            Label {
                anchors.centerIn: parent
                width: parent.width - 20
                visible: list.count === 0
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.WordWrap
                opacity: 0.6
                text: qsTr("No conversations yet.\nStart one with New chat.")
            }
        }
    }
}
