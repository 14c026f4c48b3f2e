// Conversations: search as you type, new chat, and the list grouped Pinned / Today / This week
// / Older. Each row renames inline, pins and deletes (with an undo toast).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

Pane {
    id: root
    objectName: "sidebar"
    padding: 10

    function focusSearch() {
        search.forceActiveFocus()
        search.selectAll()
    }

    background: Rectangle {
        color: root.palette.alternateBase
        Rectangle {
            anchors.right: parent.right
            width: 1
            height: parent.height
            color: root.palette.mid
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
                onClicked: ChatController.newChat()
            }
        }

        TextField {
            id: search
            objectName: "conversationSearch"
            Layout.fillWidth: true
            placeholderText: qsTr("Search chats (Ctrl+F)")
            Accessible.name: qsTr("Search conversations")
            selectByMouse: true
            onTextChanged: ChatController.setSearch(text)
            Keys.onEscapePressed: text = ""
        }

        ListView {
            id: list
            objectName: "conversationList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: ChatController.conversations
            currentIndex: -1
            spacing: 2
            ScrollBar.vertical: ScrollBar {}

            section.property: "group"
            section.delegate: Label {
                required property string section
                text: section === "Pinned" ? qsTr("Pinned") : section === "Today" ? qsTr("Today")
                    : section === "This week" ? qsTr("This week") : qsTr("Older")
                font.bold: true
                font.pixelSize: 12
                opacity: 0.6
                topPadding: 10
                bottomPadding: 4
                leftPadding: 6
            }

            delegate: ConversationDelegate {
                width: ListView.view.width
            }

            Label {
                anchors.centerIn: parent
                width: parent.width - 20
                visible: list.count === 0
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.WordWrap
                opacity: 0.6
                text: search.text.length > 0 ? qsTr("No chat matches “%1”.").arg(search.text)
                                             : qsTr("No conversations yet.\nStart one with New chat.")
            }
        }
    }
}
